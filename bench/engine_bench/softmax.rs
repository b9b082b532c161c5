//! engine_bench's softmax figures: the five unfused launches, the fused program, its
//! prefixes (`--only softmax_probe`) and each unfused launch alone (`--only
//! softmax_parts`), over the rows of an n x n f32 matrix.

use super::{burst_seconds, emit, square};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::fused::{fused, FusedOp, FusedOp::*, FusedProgram};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{DType, Tensor};
use BinaryOp as B;
use ReduceOp as R;
use UnaryOp as U;

/// Softmax over the rows of an n x n matrix as Nx computes it without fusion:
/// exp(x - max) / sum(exp(x - max)), five launches.
pub fn softmax_rows(n: usize, reps: usize, burst: usize) {
    let t = square(n);
    let f = DType::F32;
    let s = burst_seconds(reps, burst, &|| {
        let m = reduce(ReduceOp::Max, &t, Some(&[1]), true, f).unwrap();
        let x = binary(BinaryOp::Subtract, &t, &m, &[n, n], f).unwrap();
        let e = unary(UnaryOp::Exp, &x, f).unwrap();
        let z = reduce(ReduceOp::Sum, &e, Some(&[1]), true, f).unwrap();
        binary(BinaryOp::Divide, &e, &z, &[n, n], f).unwrap()
    });
    emit(
        "softmax_rows_f32",
        &format!("{}", n * n),
        s * 1e6,
        "us",
        ",\"what\":\"max, subtract, exp, sum, divide (unfused)\"",
    );
}

/// The fused softmax's slots: max, x - max, exp, sum, divide (what Nx.Vulkan.Compiler
/// builds for it).
fn softmax_slots() -> Vec<FusedOp> {
    vec![
        Input(0),
        Reduce(R::Max, 0),
        Binary(B::Subtract, 0, 1),
        Unary(U::Exp, 2),
        Reduce(R::Sum, 3),
        Binary(B::Divide, 3, 4),
    ]
}

/// Times one fused program over the rows of `t` and emits it as `figure`.
fn time_rows_program(
    t: &Tensor,
    slots: Vec<FusedOp>,
    per_row: bool,
    figure: &str,
    what: &str,
    reps: usize,
    burst: usize,
) {
    let program = FusedProgram {
        dtype: DType::F32,
        shape: t.shape.clone(),
        row_axes: 1,
        slots,
        per_row,
    };
    let s = burst_seconds(reps, burst, &|| fused(&program, &[t]).unwrap());
    emit(figure, &format!("{}", t.numel()), s * 1e6, "us", what);
}

/// The same softmax as one fused program (what Nx.Vulkan.Compiler runs for it): max,
/// then sum of exp(x - max), then exp(x - max) / sum, three passes over each row in one
/// launch.
pub fn softmax_fused(n: usize, reps: usize, burst: usize) {
    let what = ",\"what\":\"one fused launch (Nx.Vulkan.Compiler)\"";
    time_rows_program(
        &square(n),
        softmax_slots(),
        false,
        "softmax_rows_fused_f32",
        what,
        reps,
        burst,
    );
}

/// Prefixes of the fused softmax, each one launch over the same n x n rows (to see
/// where its time goes): the row max alone, x - max, exp(x - max), the row sums of
/// exp(x - max), and the softmax with a multiply in place of the divide.
pub fn softmax_probe(n: usize, reps: usize, burst: usize) {
    let t = square(n);
    let slots = softmax_slots();
    let probes: [(&str, usize, Option<FusedOp>, bool); 5] = [
        ("max", 2, None, true),
        ("sub", 3, None, false),
        ("exp", 4, None, false),
        ("expsum", 5, None, true),
        ("mul", 5, Some(Binary(B::Multiply, 3, 4)), false),
    ];
    for (name, len, tail, per_row) in probes {
        let mut prefix = slots[..len].to_vec();
        prefix.extend(tail);
        time_rows_program(
            &t,
            prefix,
            per_row,
            &format!("softmax_probe_{name}"),
            "",
            reps,
            burst,
        );
    }
}

/// The five launches of `softmax_rows`, each timed alone (to see where the time goes).
pub fn softmax_parts(n: usize, reps: usize, burst: usize) {
    let t = square(n);
    let f = DType::F32;
    let m = reduce(ReduceOp::Max, &t, Some(&[1]), true, f).unwrap();
    let e = unary(UnaryOp::Exp, &t, f).unwrap();
    let parts: [(&str, &dyn Fn() -> Tensor); 5] = [
        ("max_rows", &|| {
            reduce(ReduceOp::Max, &t, Some(&[1]), true, f).unwrap()
        }),
        ("subtract_column", &|| {
            binary(BinaryOp::Subtract, &t, &m, &[n, n], f).unwrap()
        }),
        ("exp", &|| unary(UnaryOp::Exp, &t, f).unwrap()),
        ("sum_rows", &|| {
            reduce(ReduceOp::Sum, &e, Some(&[1]), true, f).unwrap()
        }),
        ("divide_column", &|| {
            binary(BinaryOp::Divide, &e, &m, &[n, n], f).unwrap()
        }),
    ];
    for (name, op) in parts {
        let s = burst_seconds(reps, burst, op);
        emit(
            &format!("softmax_part_{name}"),
            &format!("{}", n * n),
            s * 1e6,
            "us",
            "",
        );
    }
}
