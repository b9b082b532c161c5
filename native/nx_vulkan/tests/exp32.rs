//! f32 exp's fast path (shaders/common/exp32.glsl), where the engine computes f32 math
//! exactly (a device with f64, `NX_VULKAN_F32_MATH` not `native`): in the element-wise
//! kernel, in an element-wise fused program and in a fused softmax, every f32 exp must be
//! the f64 reference rounded once, on a sweep of 2^20 arguments spread over every binade
//! of both signs (NaN, infinities and the overflow and underflow edges among them).
//! About 0.03% of finite arguments below 87 in magnitude fail the fast path's rounding
//! test and take the double path, so both paths run here.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::fused::{fused, FusedOp::*, FusedProgram};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::DType;

fn f32_math_in_double() -> bool {
    nx_vulkan::engine::engine().unwrap().info().f64
        && std::env::var("NX_VULKAN_F32_MATH").map_or(true, |v| v != "native")
}

/// 2^20 arguments: every 4096th f32 bit pattern, each moved by a pseudo-random offset
/// within its step, then the edges of the fast path's range and of f32 exp's.
fn sweep() -> Vec<f32> {
    let mut x: Vec<f32> = (0..1u64 << 20)
        .map(|i| f32::from_bits((i * 4096 + (i * 2_654_435_761) % 4096) as u32))
        .collect();
    let edges = [
        86.99999, 87.0, -86.99999, -87.0, 88.72283, 88.72284, -87.33654, -103.97208, 0.0, -0.0,
    ];
    x[..edges.len()].copy_from_slice(&edges);
    x
}

/// The exps in `got` that are not `x`'s f64 reference rounded once (NaN for NaN); a
/// reference within 2^-40 of the midpoint between two floats may go either way (the
/// double path rounds a double, as Nx does).
fn wrong(x: &[f32], got: &[f32]) -> Vec<String> {
    let mut bad = Vec::new();
    for (&v, &g) in x.iter().zip(got) {
        let w = (v as f64).exp();
        let want = w as f32;
        if want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()) {
            continue;
        }
        let mid = (want as f64 + g as f64) / 2.0;
        let adjacent = (want.to_bits() as i64 - g.to_bits() as i64).abs() == 1;
        if !(adjacent && (w - mid).abs() <= 2f64.powi(-40) * w.abs()) {
            bad.push(format!(
                "exp({v:e}) ({:#010x}) = {g:e}, want {want:e}",
                v.to_bits()
            ));
        }
    }
    bad
}

fn assert_none(bad: Vec<String>, what: &str) {
    assert!(
        bad.is_empty(),
        "{what}: {} exps not rounded once:\n{}",
        bad.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

#[test]
fn exp_kernel_rounds_every_f32_once() {
    if !f32_math_in_double() {
        eprintln!("skipped: f32 math uses the driver's built-ins on this run");
        return;
    }
    let x = sweep();
    let t = upload(&[x.len()], DType::F32, &x);
    let got: Vec<f32> = download(&unary(UnaryOp::Exp, &t, DType::F32).unwrap());
    assert_none(wrong(&x, &got), "unary exp");
}

#[test]
fn fused_exp_rounds_every_f32_once() {
    if !f32_math_in_double() {
        eprintln!("skipped: f32 math uses the driver's built-ins on this run");
        return;
    }
    let x = sweep();
    let shape = [1024, x.len() / 1024];
    let t = upload(&shape, DType::F32, &x);
    let program = FusedProgram {
        dtype: DType::F32,
        shape: shape.to_vec(),
        row_axes: 1,
        slots: vec![Input(0), Unary(UnaryOp::Exp, 0)],
        per_row: false,
    };
    let got: Vec<f32> = download(&fused(&program, &[&t]).unwrap());
    assert_none(wrong(&x, &got), "fused exp");
}

/// Softmax keeps exp(x - max) in shared memory between its passes: those values, and the
/// result, must be the op-by-op ones bit for bit on rows whose differences span exp's
/// whole range (some rows reach the double path).
#[test]
fn fused_softmax_matches_op_by_op_across_exp_range() {
    let mut rng = Rng::new(32);
    let (rows, cols) = (64, 1000);
    // Differences from each row's max down to about -110: e^-110 is below f32's
    // subnormals, so the double path runs for the smallest ones.
    let x = rng.f32s(rows * cols, -100.0, 10.0);
    let t = upload(&[rows, cols], DType::F32, &x);
    let m = reduce(ReduceOp::Max, &t, Some(&[1]), true, DType::F32).unwrap();
    let d = binary(BinaryOp::Subtract, &t, &m, &[rows, cols], DType::F32).unwrap();
    let e = unary(UnaryOp::Exp, &d, DType::F32).unwrap();
    let s = reduce(ReduceOp::Sum, &e, Some(&[1]), true, DType::F32).unwrap();
    let want: Vec<f32> =
        download(&binary(BinaryOp::Divide, &e, &s, &[rows, cols], DType::F32).unwrap());
    let program = FusedProgram {
        dtype: DType::F32,
        shape: vec![rows, cols],
        row_axes: 1,
        slots: vec![
            Input(0),
            Reduce(ReduceOp::Max, 0),
            Binary(BinaryOp::Subtract, 0, 1),
            Unary(UnaryOp::Exp, 2),
            Reduce(ReduceOp::Sum, 3),
            Binary(BinaryOp::Divide, 3, 4),
        ],
        per_row: false,
    };
    let got: Vec<f32> = download(&fused(&program, &[&t]).unwrap());
    let off: Vec<String> = got
        .iter()
        .zip(&want)
        .enumerate()
        .filter(|(_, (g, w))| ulp_diff(**g, **w) > 1)
        .map(|(i, (g, w))| format!("[{i}] {g:e} against {w:e}"))
        .collect();
    assert!(
        off.is_empty(),
        "softmax off by more than an ulp:\n{}",
        off[..off.len().min(20)].join("\n")
    );
}
