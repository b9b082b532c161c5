//! Generated kernels with reductions (src/codegen/reduction.rs) against the unfused ops:
//! row, column and middle-axes reductions with element-wise nodes before and after them,
//! outputs of one value per point and of one per element, in the float and integer
//! classes. Sums here add numbers whose sums the accumulator holds exactly, so that the
//! order of the additions (one invocation in order; a tree in the reduction kernels)
//! cannot change a bit; maxima and minima keep reduce.comp's order rules (NaN first, the
//! earlier of 0.0 and -0.0), which the rows' special values exercise.

mod common;

use common::codegen::{assert_same, spirv_val};
use nx_vulkan::codegen::{self, Group, Node, View};
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::ops::layout::contiguous_strides;
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{DType, Tensor};

/// Dyadic values k / 2^8 for k in [-2^12, 2^12), from a seeded stream, with the float
/// specials (±0, NaN, ±inf) sprinkled in where `specials` is set.
fn values(n: usize, seed: u64, specials: bool) -> Vec<f64> {
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = ((x >> 33) % 8192) as i64 - 4096;
            match (specials, i % 23) {
                (true, 3) => 0.0,
                (true, 4) => -0.0,
                (true, 11) => f64::NAN,
                (true, 17) => f64::INFINITY,
                (true, 19) => f64::NEG_INFINITY,
                _ => k as f64 / 256.0,
            }
        })
        .collect()
}

fn upload(dtype: DType, shape: &[usize], v: &[f64]) -> Tensor {
    let bytes: Vec<u8> = match dtype {
        DType::F32 => v.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect(),
        DType::F64 => v.iter().flat_map(|&x| x.to_le_bytes()).collect(),
        DType::S32 => v
            .iter()
            .flat_map(|&x| ((x * 256.0) as i32).to_le_bytes())
            .collect(),
        DType::S64 => v
            .iter()
            .flat_map(|&x| ((x * 256.0) as i64 * 0x1_0000_0001).to_le_bytes())
            .collect(),
        _ => unreachable!(),
    };
    Tensor::from_bytes(shape, dtype, &bytes).unwrap()
}

fn contiguous(dtype: DType, shape: &[usize]) -> View {
    View {
        dtype,
        strides: contiguous_strides(shape),
        offset: 0,
    }
}

/// Runs `group` after spirv-val has passed its module.
fn run(group: &Group, inputs: &[&Tensor], what: &str) -> Vec<Tensor> {
    spirv_val(&codegen::spirv(group).unwrap(), what);
    codegen::run(group, inputs).unwrap_or_else(|e| panic!("{what}: {e}"))
}

#[test]
fn softmax_rows_fold_as_the_ops_one_by_one() {
    // m = max(x, row); d = x - m; s = sum(d, row); q = s * 0.5: outputs m, d, q.
    for dtype in [DType::F32, DType::F64] {
        let shape = [37, 10];
        let x = upload(dtype, &shape, &values(370, 7, true));
        let half = match dtype {
            DType::F32 => 0.5f32.to_bits() as u64,
            _ => 0.5f64.to_bits(),
        };
        let group = Group {
            shape: shape.to_vec(),
            reduce_axes: vec![1],
            inputs: vec![contiguous(dtype, &shape)],
            nodes: vec![
                Node::Input(0),
                Node::Reduce(ReduceOp::Max, 0, dtype),
                Node::Binary(BinaryOp::Subtract, 0, 1, dtype),
                Node::Reduce(ReduceOp::Sum, 2, dtype),
                Node::Constant(half, dtype),
                Node::Binary(BinaryOp::Multiply, 3, 4, dtype),
            ],
            outputs: vec![1, 2, 5],
        };
        let got = run(&group, &[&x], "softmax rows");
        let m = reduce(ReduceOp::Max, &x, Some(&[1]), true, dtype).unwrap();
        let d = binary(BinaryOp::Subtract, &x, &m, &shape, dtype).unwrap();
        let s = reduce(ReduceOp::Sum, &d, Some(&[1]), false, dtype).unwrap();
        let h = upload(dtype, &[], &[0.5]);
        let q = binary(BinaryOp::Multiply, &s, &h, &[37], dtype).unwrap();
        let m = reduce(ReduceOp::Max, &x, Some(&[1]), false, dtype).unwrap();
        assert_same("row max", dtype, &got[0], &m);
        assert_same("x - max", dtype, &got[1], &d);
        assert_same("half the row sum", dtype, &got[2], &q);
    }
}

#[test]
fn columns_fold_with_the_element_wise_values_stored() {
    // u = a * b + c with b broadcast along the rows; v = sum(u, axis 0): outputs u and v
    // (a dense layer's bias gradient beside the gradient itself).
    let dtype = DType::F32;
    let shape = [128, 10];
    let a = upload(dtype, &shape, &values(1280, 3, false));
    let b = upload(dtype, &[10], &values(10, 5, false));
    let c = upload(dtype, &shape, &values(1280, 9, false));
    let group = Group {
        shape: shape.to_vec(),
        reduce_axes: vec![0],
        inputs: vec![
            contiguous(dtype, &shape),
            View {
                dtype,
                strides: vec![0, 1],
                offset: 0,
            },
            contiguous(dtype, &shape),
        ],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Multiply, 0, 1, dtype),
            Node::Input(2),
            Node::Binary(BinaryOp::Add, 2, 3, dtype),
            Node::Reduce(ReduceOp::Sum, 4, dtype),
        ],
        outputs: vec![4, 5],
    };
    let got = run(&group, &[&a, &b, &c], "columns");
    let ab = binary(BinaryOp::Multiply, &a, &b, &shape, dtype).unwrap();
    let u = binary(BinaryOp::Add, &ab, &c, &shape, dtype).unwrap();
    let v = reduce(ReduceOp::Sum, &u, Some(&[0]), false, dtype).unwrap();
    assert_same("u", dtype, &got[0], &u);
    assert_same("column sums", dtype, &got[1], &v);
}

#[test]
fn middle_and_outer_axes_fold_in_every_op_and_integer_class() {
    // Axes 0 and 2 of [4, 5, 6] folded, axis 1 kept; and all three.
    for dtype in [DType::F32, DType::F64, DType::S32, DType::S64] {
        let shape = [4, 5, 6];
        let x = upload(dtype, &shape, &values(120, 11, false));
        for axes in [vec![0, 2], vec![0, 1, 2], vec![2]] {
            for op in [
                ReduceOp::Sum,
                ReduceOp::Product,
                ReduceOp::Max,
                ReduceOp::Min,
            ] {
                let group = Group {
                    shape: shape.to_vec(),
                    reduce_axes: axes.clone(),
                    inputs: vec![contiguous(dtype, &shape)],
                    nodes: vec![Node::Input(0), Node::Reduce(op, 0, dtype)],
                    outputs: vec![1],
                };
                let what = format!("{op:?} of {dtype:?} over {axes:?}");
                let got = run(&group, &[&x], &what);
                let want = reduce(op, &x, Some(&axes), false, dtype).unwrap();
                // (Products of floats round; their order is the engine's too: compared
                // where they cannot, the integers, which wrap.)
                if op == ReduceOp::Product && !dtype.is_int() {
                    continue;
                }
                assert_same(&what, dtype, &got[0], &want);
            }
        }
    }
}

#[test]
fn reductions_that_would_compute_otherwise_are_refused() {
    let f = DType::F32;
    let group = |reduce_axes: Vec<usize>, nodes: Vec<Node>| Group {
        shape: vec![4, 8],
        reduce_axes,
        inputs: vec![contiguous(f, &[4, 8])],
        outputs: vec![nodes.len() - 1],
        nodes,
    };
    let sum = |a| Node::Reduce(ReduceOp::Sum, a, f);
    let refused = [
        (
            "no reduced axes",
            group(vec![], vec![Node::Input(0), sum(0)]),
        ),
        ("no reduction", group(vec![1], vec![Node::Input(0)])),
        (
            "an axis past the rank",
            group(vec![2], vec![Node::Input(0), sum(0)]),
        ),
        (
            "unsorted axes",
            group(vec![1, 0], vec![Node::Input(0), sum(0)]),
        ),
        (
            "a sum of a sum",
            group(vec![1], vec![Node::Input(0), sum(0), sum(1)]),
        ),
        (
            "an f32 sum into f64",
            group(
                vec![1],
                vec![Node::Input(0), Node::Reduce(ReduceOp::Sum, 0, DType::F64)],
            ),
        ),
        (
            "all",
            group(
                vec![1],
                vec![Node::Input(0), Node::Reduce(ReduceOp::All, 0, f)],
            ),
        ),
    ];
    for (what, g) in refused {
        assert!(g.check().is_err(), "{what} is accepted");
    }
    let long = Group {
        shape: vec![2, codegen::ir::MAX_REDUCED + 1],
        reduce_axes: vec![1],
        inputs: vec![contiguous(f, &[2, codegen::ir::MAX_REDUCED + 1])],
        nodes: vec![Node::Input(0), sum(0)],
        outputs: vec![1],
    };
    assert!(long.check().is_err(), "a row past MAX_REDUCED is accepted");
}

#[test]
fn a_loss_row_with_exp_folds_as_the_ops_one_by_one() {
    // A classifier's loss row: l = z + b; m = max(l, row); o = l - m; p = exp(o);
    // q = sum(p, row): outputs o, p and q, as the Axon step's gradient reads them. exp is
    // the math library's function of the unfused kernel (f32 through f64, and its fast
    // path where the device takes it). (An f32 sum adds in f64: these sums are exact but
    // where the last bits of the double sum could round to another f32, which the
    // values here never meet.)
    use nx_vulkan::ops::elementwise::{unary, UnaryOp};
    let f = DType::F32;
    let shape = [128, 10];
    let z = upload(f, &shape, &values(1280, 21, true));
    let b = upload(f, &[10], &values(10, 22, false));
    let group = Group {
        shape: shape.to_vec(),
        reduce_axes: vec![1],
        inputs: vec![
            contiguous(f, &shape),
            View {
                dtype: f,
                strides: vec![0, 1],
                offset: 0,
            },
        ],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Add, 0, 1, f),
            Node::Reduce(ReduceOp::Max, 2, f),
            Node::Binary(BinaryOp::Subtract, 2, 3, f),
            Node::Unary(UnaryOp::Exp, 4, f),
            Node::Reduce(ReduceOp::Sum, 5, f),
        ],
        outputs: vec![4, 5, 6],
    };
    let got = run(&group, &[&z, &b], "loss row");
    let l = binary(BinaryOp::Add, &z, &b, &shape, f).unwrap();
    let m = reduce(ReduceOp::Max, &l, Some(&[1]), true, f).unwrap();
    let o = binary(BinaryOp::Subtract, &l, &m, &shape, f).unwrap();
    let p = unary(UnaryOp::Exp, &o, f).unwrap();
    let q = reduce(ReduceOp::Sum, &p, Some(&[1]), false, f).unwrap();
    assert_same("l - max", f, &got[0], &o);
    assert_same("exp", f, &got[1], &p);
    assert_same("row sums of exp", f, &got[2], &q);
}
