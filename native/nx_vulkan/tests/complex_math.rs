//! Transcendental functions of complex numbers (exp, log, sin, ... cbrt, pow on c64 and
//! c128) against the `complex` library's formulas evaluated here in f64 over libm
//! (tests/common/complex_math.rs): a grid of finite values and the special values the
//! library has clauses for.

mod common;

use common::complex::*;
use common::complex_math::{pow, unary_ref};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::DType;

const UNARY: [(UnaryOp, &str); 19] = [
    (UnaryOp::Exp, "exp"),
    (UnaryOp::Expm1, "expm1"),
    (UnaryOp::Log, "log"),
    (UnaryOp::Log1p, "log1p"),
    (UnaryOp::Sigmoid, "sigmoid"),
    (UnaryOp::Sin, "sin"),
    (UnaryOp::Cos, "cos"),
    (UnaryOp::Tan, "tan"),
    (UnaryOp::Sinh, "sinh"),
    (UnaryOp::Cosh, "cosh"),
    (UnaryOp::Tanh, "tanh"),
    (UnaryOp::Asin, "asin"),
    (UnaryOp::Acos, "acos"),
    (UnaryOp::Atan, "atan"),
    (UnaryOp::Asinh, "asinh"),
    (UnaryOp::Acosh, "acosh"),
    (UnaryOp::Atanh, "atanh"),
    (UnaryOp::Rsqrt, "rsqrt"),
    (UnaryOp::Cbrt, "cbrt"),
];

/// Finite values: a grid over [-4, 4]^2 (zeros of both signs, the axes, the branch
/// cuts at +-1 and +-i) plus a few larger and smaller magnitudes.
fn finite_inputs() -> Vec<C> {
    let steps = [-4.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.5];
    let mut v: Vec<C> = steps
        .iter()
        .flat_map(|&re| steps.iter().map(move |&im| (re, im)))
        .collect();
    v.extend([
        (1e-6, -2e-7),
        (20.0, 1.0),
        (-30.0, 0.5),
        (0.5, 40.0),
        (100.0, -100.0),
    ]);
    v
}

/// Infinities and NaN in either part, with finite, zero and non-finite partners.
fn special_inputs() -> Vec<C> {
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let parts = [inf, -inf, nan, 0.0, 1.5, -2.0];
    parts
        .iter()
        .flat_map(|&re| parts.iter().map(move |&im| (re, im)))
        .filter(|z| !(z.0.is_finite() && z.1.is_finite()))
        .collect()
}

/// Within `tol` of the larger of 1 and the reference's magnitude, each part; NaN where
/// the reference is NaN and infinities exactly.
fn assert_close(got: &[C], want: &[C], ty: DType, what: &str) {
    let tol = if ty == DType::C64 { 2.5e-7 } else { 1e-13 };
    let round = |x: f64| if ty == DType::C64 { x as f32 as f64 } else { x };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let w = (round(w.0), round(w.1));
        let scale = 1f64.max(w.0.abs()).max(w.1.abs());
        let part = |g: f64, w: f64| {
            if !w.is_finite() || !g.is_finite() {
                same(g, w)
            } else {
                (g - w).abs() <= tol * scale
            }
        };
        assert!(
            part(g.0, w.0) && part(g.1, w.1),
            "{what} {}: element {i}: got {g:?}, want {w:?}",
            ty.name()
        );
    }
}

#[test]
fn unary_functions_match_the_complex_library() {
    let finite = finite_inputs();
    // c64 differs from c128 only in its loads and stores (both compute in f64), and each
    // (function, type) pair is a pipeline that takes seconds to build on lavapipe: c64
    // is checked on a few functions.
    for ty in [DType::C64, DType::C128] {
        let t = up(&[finite.len()], ty, &finite);
        for (op, name) in UNARY {
            if ty == DType::C64 && !["exp", "log", "atan", "cbrt"].contains(&name) {
                continue;
            }
            let got = down(&unary(op, &t, ty).unwrap());
            let want: Vec<C> = finite.iter().map(|&z| unary_ref(name, z)).collect();
            assert_close(&got, &want, ty, name);
        }
    }
}

#[test]
fn special_values_follow_the_library_clauses() {
    let special = special_inputs();
    let t = up(&[special.len()], DType::C128, &special);
    // Functions with clauses of their own for infinities and NaN: exp (and those made
    // of it), log, sin, cos, asin, acos, cbrt; each part must be the reference's
    // exactly (NaN for NaN).
    for (op, name) in UNARY {
        if !["exp", "expm1", "log", "sin", "cos", "asin", "acos", "cbrt"].contains(&name) {
            continue;
        }
        let got = down(&unary(op, &t, DType::C128).unwrap());
        for (i, (g, z)) in got.iter().zip(&special).enumerate() {
            let w = unary_ref(name, *z);
            assert!(
                same(g.0, w.0) && same(g.1, w.1),
                "{name}{z:?} (element {i}): got {g:?}, want {w:?}"
            );
        }
    }
}

#[test]
fn pow_of_complex_and_real_operands() {
    let bases = finite_inputs();
    let exponents = [
        (2.0, 0.0),
        (0.5, -1.5),
        (-1.0, 0.0),
        (1.0, 0.0),
        (0.0, 0.0),
        (-2.5, 3.0),
    ];
    for ty in [DType::C64, DType::C128] {
        let a = up(&[bases.len(), 1], ty, &bases);
        let b = up(&[1, exponents.len()], ty, &exponents);
        let shape = [bases.len(), exponents.len()];
        let got = down(&binary(BinaryOp::Pow, &a, &b, &shape, ty).unwrap());
        let want: Vec<C> = bases
            .iter()
            .flat_map(|&x| exponents.iter().map(move |&y| pow(x, y)))
            .collect();
        assert_close(&got, &want, ty, "pow");
    }
    // A real exponent tensor is complex with a zero imaginary part; 0^0 is 1, 0^y 0,
    // and a non-finite part gives NaN.
    let x = up(
        &[4],
        DType::C128,
        &[(0.0, 0.0), (0.0, 0.0), (2.0, 1.0), (f64::INFINITY, 0.0)],
    );
    let y = common::upload(&[4], DType::F64, &[0.0f64, 3.0, 2.0, 2.0]);
    let got = down(&binary(BinaryOp::Pow, &x, &y, &[4], DType::C128).unwrap());
    let want = [
        (1.0, 0.0),
        (0.0, 0.0),
        pow((2.0, 1.0), (2.0, 0.0)),
        (f64::NAN, f64::NAN),
    ];
    assert_close(&got, &want, DType::C128, "pow with a real exponent");
}
