//! engine_bench's generated-kernel figures (`--only generated`): an f32 add of 16M
//! elements by the static kernel and as a generated one-op kernel (the same code, through
//! the unoptimised library), and a chain of 10 element-wise ops (a comparison and a
//! select among them) as 10 static launches and as one generated kernel; the time to
//! generate and build a new kernel of 100 nodes; and two reductions with the element-wise
//! ops around them (a bias gradient's column sums beside the gradient, a classifier's row
//! max and sum of shifted logits) as the static launches and as one generated kernel.

use super::{burst_seconds, emit, emit_throughput, f32_bytes};
use nx_vulkan::codegen::{self, Group, Node, View};
use nx_vulkan::ops::creation::{constant, Scalar};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::indexing::select;
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{DType, Tensor};
use std::time::Instant;

const F: DType = DType::F32;

/// A contiguous f32 input of a one-axis domain.
fn contiguous() -> View {
    View {
        dtype: F,
        strides: vec![1],
        offset: 0,
    }
}

/// The chain: t = a * b + a; u = max(t, b) - 0.5; m = u > a; s = select(m, u, t);
/// r = abs(s) * b - negate(a), written as Nx would record it: 10 launches unfused.
fn chain_group(n: usize) -> Group {
    use BinaryOp::*;
    Group {
        reduce_axes: vec![],
        shape: vec![n],
        inputs: vec![contiguous(), contiguous()],
        nodes: vec![
            Node::Input(0),                             // 0 a
            Node::Input(1),                             // 1 b
            Node::Binary(Multiply, 0, 1, F),            // 2
            Node::Binary(Add, 2, 0, F),                 // 3 t
            Node::Binary(Max, 3, 1, F),                 // 4
            Node::Constant(0.5f32.to_bits() as u64, F), // 5
            Node::Binary(Subtract, 4, 5, F),            // 6 u
            Node::Binary(Greater, 6, 0, DType::U8),     // 7 m
            Node::Select(7, 6, 3, F),                   // 8 s
            Node::Unary(UnaryOp::Abs, 8, F),            // 9
            Node::Binary(Multiply, 9, 1, F),            // 10
            Node::Unary(UnaryOp::Negate, 0, F),         // 11
            Node::Binary(Subtract, 10, 11, F),          // 12 r
        ],
        outputs: vec![12],
    }
}

fn chain_static(a: &Tensor, b: &Tensor, half: &Tensor, n: usize) -> Tensor {
    use BinaryOp::*;
    let s = [n];
    let p = binary(Multiply, a, b, &s, F).unwrap();
    let t = binary(Add, &p, a, &s, F).unwrap();
    let x = binary(Max, &t, b, &s, F).unwrap();
    let u = binary(Subtract, &x, half, &s, F).unwrap();
    let m = binary(Greater, &u, a, &s, DType::U8).unwrap();
    let sel = select(&m, &u, &t, &s, F).unwrap();
    let ab = unary(UnaryOp::Abs, &sel, F).unwrap();
    let q = binary(Multiply, &ab, b, &s, F).unwrap();
    let na = unary(UnaryOp::Negate, a, F).unwrap();
    binary(Subtract, &q, &na, &s, F).unwrap()
}

pub fn generated(reps: usize, burst: usize) {
    let n = 1 << 24;
    let a = Tensor::from_bytes(&[n], F, &f32_bytes(n, 1)).unwrap();
    let b = Tensor::from_bytes(&[n], F, &f32_bytes(n, 2)).unwrap();
    let add = Group {
        reduce_axes: vec![],
        shape: vec![n],
        inputs: vec![contiguous(), contiguous()],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Add, 0, 1, F),
        ],
        outputs: vec![2],
    };
    let t = burst_seconds(reps, burst, &|| {
        binary(BinaryOp::Add, &a, &b, &[n], F).unwrap()
    });
    emit_throughput("add_f32_static", n, 3 * n * 4, t);
    let t = burst_seconds(reps, burst, &|| {
        codegen::run(&add, &[&a, &b]).unwrap().remove(0)
    });
    emit_throughput("add_f32_generated", n, 3 * n * 4, t);

    let half = constant(&[n], F, Scalar::Float(0.5)).unwrap();
    let chain = chain_group(n);
    let t = burst_seconds(reps, burst, &|| chain_static(&a, &b, &half, n));
    emit(
        "chain10_static",
        &format!("{n}"),
        t * 1e6,
        "us",
        ",\"launches\":10",
    );
    let t = burst_seconds(reps, burst, &|| {
        codegen::run(&chain, &[&a, &b]).unwrap().remove(0)
    });
    emit(
        "chain10_generated",
        &format!("{n}"),
        t * 1e6,
        "us",
        ",\"launches\":1",
    );

    // A new 100-node group (a chain of adds and multiplies on two inputs): SPIR-V emitted
    // and the pipeline built, first call.
    let mut nodes = vec![Node::Input(0), Node::Input(1)];
    for i in 2..100 {
        let op = if i % 2 == 0 {
            BinaryOp::Add
        } else {
            BinaryOp::Multiply
        };
        nodes.push(Node::Binary(op, i - 1, i % 2, F));
    }
    let big = Group {
        reduce_axes: vec![],
        shape: vec![1024],
        inputs: vec![contiguous(), contiguous()],
        nodes,
        outputs: vec![99],
    };
    let (x, y) = (
        Tensor::from_bytes(&[1024], F, &f32_bytes(1024, 3)).unwrap(),
        Tensor::from_bytes(&[1024], F, &f32_bytes(1024, 4)).unwrap(),
    );
    let t0 = Instant::now();
    let words = codegen::spirv(&big).unwrap();
    let emit_us = t0.elapsed().as_secs_f64() * 1e6;
    let t0 = Instant::now();
    let out = codegen::run(&big, &[&x, &y]).unwrap().remove(0);
    let first_ms = t0.elapsed().as_secs_f64() * 1e3;
    out.to_bytes().unwrap();
    emit(
        "compile_ms",
        "100 nodes",
        first_ms,
        "ms",
        &format!(",\"emit_us\":{emit_us:.0},\"spirv_words\":{}", words.len()),
    );

    reductions(reps, burst);
}

fn view(strides: Vec<isize>) -> View {
    View {
        dtype: F,
        strides,
        offset: 0,
    }
}

/// u = a * b + c (b one row broadcast) and v = sum(u, axis 0), over [65536, 256]; and
/// m = max(x, row), d = x - m, s = sum(d, row) over [2^20, 10].
fn reductions(reps: usize, burst: usize) {
    use BinaryOp::*;
    let (rows, cols) = (1 << 16, 256);
    let n = rows * cols;
    let a = Tensor::from_bytes(&[rows, cols], F, &f32_bytes(n, 5)).unwrap();
    let b = Tensor::from_bytes(&[cols], F, &f32_bytes(cols, 6)).unwrap();
    let c = Tensor::from_bytes(&[rows, cols], F, &f32_bytes(n, 7)).unwrap();
    let shape = [rows, cols];
    let t = burst_seconds(reps, burst, &|| {
        let ab = binary(Multiply, &a, &b, &shape, F).unwrap();
        let u = binary(Add, &ab, &c, &shape, F).unwrap();
        reduce(ReduceOp::Sum, &u, Some(&[0]), false, F).unwrap()
    });
    let size = format!("{rows}x{cols}");
    emit("bias_grad_static", &size, t * 1e6, "us", ",\"launches\":4");
    let group = Group {
        shape: shape.to_vec(),
        reduce_axes: vec![0],
        inputs: vec![
            view(vec![cols as isize, 1]),
            view(vec![0, 1]),
            view(vec![cols as isize, 1]),
        ],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(Multiply, 0, 1, F),
            Node::Input(2),
            Node::Binary(Add, 2, 3, F),
            Node::Reduce(ReduceOp::Sum, 4, F),
        ],
        outputs: vec![4, 5],
    };
    let t = burst_seconds(reps, burst, &|| {
        codegen::run(&group, &[&a, &b, &c]).unwrap().remove(1)
    });
    emit(
        "bias_grad_generated",
        &size,
        t * 1e6,
        "us",
        ",\"launches\":1",
    );

    let (rows, cols) = (1 << 20, 10);
    let shape = [rows, cols];
    let x = Tensor::from_bytes(&shape, F, &f32_bytes(rows * cols, 8)).unwrap();
    let t = burst_seconds(reps, burst, &|| {
        let m = reduce(ReduceOp::Max, &x, Some(&[1]), true, F).unwrap();
        let d = binary(Subtract, &x, &m, &shape, F).unwrap();
        reduce(ReduceOp::Sum, &d, Some(&[1]), false, F).unwrap()
    });
    let size = format!("{rows}x{cols}");
    emit("logit_rows_static", &size, t * 1e6, "us", ",\"launches\":3");
    let group = Group {
        shape: shape.to_vec(),
        reduce_axes: vec![1],
        inputs: vec![view(vec![cols as isize, 1])],
        nodes: vec![
            Node::Input(0),
            Node::Reduce(ReduceOp::Max, 0, F),
            Node::Binary(Subtract, 0, 1, F),
            Node::Reduce(ReduceOp::Sum, 2, F),
        ],
        outputs: vec![2, 3],
    };
    let t = burst_seconds(reps, burst, &|| {
        codegen::run(&group, &[&x]).unwrap().remove(1)
    });
    emit(
        "logit_rows_generated",
        &size,
        t * 1e6,
        "us",
        ",\"launches\":1",
    );
}
