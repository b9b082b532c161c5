//! f32 exp's fast path (shaders/common/exp32.glsl), where the engine computes f32 math
//! exactly (a device with f64, `NX_VULKAN_F32_MATH` not `native`): in the element-wise
//! kernel and in an element-wise fused program, every f32 exp must be the f64 reference
//! rounded once, on a sweep of 2^20 arguments spread over every binade of both signs
//! (NaN, infinities and the overflow and underflow edges among them). (tests/fused.rs
//! `softmax_across_exp_range` covers the fused softmax.)
//! About 0.03% of finite arguments below 87 in magnitude fail the fast path's rounding
//! test and take the double path, so both paths run here.

mod common;

use common::rounding::{f32_math_in_double, not_rounded_once};
use common::*;
use nx_vulkan::ops::elementwise::{unary, UnaryOp};
use nx_vulkan::ops::fused::{fused, FusedOp::*, FusedProgram};
use nx_vulkan::DType;

/// Whether this run does not compute f32 math exactly (then the tests say so and pass:
/// the built-ins are not rounded once).
fn skipped() -> bool {
    let exact = f32_math_in_double();
    if !exact {
        eprintln!("skipped: f32 math uses the driver's built-ins on this run");
    }
    !exact
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
    not_rounded_once(x, got, f64::exp, 2f64.powi(-40), "exp")
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
    if skipped() {
        return;
    }
    let x = sweep();
    let t = upload(&[x.len()], DType::F32, &x);
    let got: Vec<f32> = download(&unary(UnaryOp::Exp, &t, DType::F32).unwrap());
    assert_none(wrong(&x, &got), "unary exp");
}

#[test]
fn fused_exp_rounds_every_f32_once() {
    if skipped() {
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
