//! f64 math on the GPU against correctly rounded references.
//!
//! `tests/data/math64.json` holds inputs and their correctly rounded results (mpmath at
//! 300 bits; `scripts/math64_vectors.py` writes it), including trig arguments up to
//! 1.7e308 and the hardest known reduction case. The kernels compute in double-double and
//! round once, so every result must be within 1 ulp and almost all exact. Special values
//! (NaN, infinities, zeros, domain edges) are checked against Rust's std (C99 semantics).

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::DType;
use serde_json::Value;

fn vectors() -> serde_json::Map<String, Value> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/math64.json");
    let text = std::fs::read_to_string(path).expect("tests/data/math64.json");
    match serde_json::from_str(&text).expect("JSON") {
        Value::Object(m) => m,
        _ => panic!("math64.json: an object"),
    }
}

fn from_hex(v: &Value) -> f64 {
    f64::from_bits(u64::from_str_radix(v.as_str().expect("hex"), 16).expect("hex"))
}

/// Distance in units in the last place (0 for equal values, both NaN or both ±0).
fn ulps(a: f64, b: f64) -> u64 {
    if (a.is_nan() && b.is_nan()) || a == b {
        return 0;
    }
    let key = |x: f64| {
        let i = x.to_bits() as i64;
        if i < 0 {
            i64::MIN - i
        } else {
            i
        }
    };
    key(a).abs_diff(key(b))
}

fn run_unary(op: UnaryOp, x: &[f64]) -> Vec<f64> {
    let t = upload(&[x.len()], DType::F64, x);
    download(&unary(op, &t, DType::F64).unwrap_or_else(|e| panic!("{op:?}: {e}")))
}

fn run_binary(op: BinaryOp, a: &[f64], b: &[f64]) -> Vec<f64> {
    let ta = upload(&[a.len()], DType::F64, a);
    let tb = upload(&[b.len()], DType::F64, b);
    download(
        &binary(op, &ta, &tb, &[a.len()], DType::F64).unwrap_or_else(|e| panic!("{op:?}: {e}")),
    )
}

/// Compares results with the correctly rounded ones: `Err` when one is more than 1 ulp
/// off or more than `max_off` are 1 ulp off.
fn check(
    name: &str,
    inputs: &[String],
    got: &[f64],
    want: &[f64],
    max_off: usize,
) -> Result<(), String> {
    let mut off = vec![];
    for i in 0..got.len() {
        let d = ulps(got[i], want[i]);
        if d > 1 {
            return Err(format!(
                "{name}({}) = {:e}, correctly rounded {:e} ({d} ulp)",
                inputs[i], got[i], want[i]
            ));
        }
        if d == 1 {
            off.push(inputs[i].clone());
        }
    }
    if off.len() > max_off {
        return Err(format!(
            "{name}: {} of {} results 1 ulp off: {off:?}",
            off.len(),
            got.len()
        ));
    }
    Ok(())
}

#[test]
fn f64_math_is_correctly_rounded() {
    let v = vectors();
    let (mut total, mut failures) = (0, vec![]);
    for (name, rows) in &v {
        let rows = rows.as_array().expect("rows");
        let col = |c: usize| rows.iter().map(|r| from_hex(&r[c])).collect::<Vec<f64>>();
        let (got, want, inputs) = if let Some(op) = UnaryOp::from_name(name) {
            let x = col(0);
            let inputs = x.iter().map(|v| format!("{v:e}")).collect::<Vec<_>>();
            (run_unary(op, &x), col(1), inputs)
        } else {
            let op = BinaryOp::from_name(name).expect("an op name");
            let (a, b) = (col(0), col(1));
            let inputs = a
                .iter()
                .zip(&b)
                .map(|(a, b)| format!("{a:e}, {b:e}"))
                .collect();
            (run_binary(op, &a, &b), col(2), inputs)
        };
        // Double-double leaves ~2^-70 before the final rounding: a miss would need an
        // exact value within that of a rounding boundary. Allow one per function.
        if let Err(e) = check(name, &inputs, &got, &want, 1) {
            failures.push(e);
        }
        total += got.len();
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total > 1000, "only {total} vectors");
}

/// A host function to compare with.
type Reference = fn(f64) -> f64;

#[test]
fn f64_math_special_values_follow_c99() {
    let inf = f64::INFINITY;
    // Beyond 2^996 the exact-product split scales (1e301); subnormals (5e-324) keep
    // their last bit; sigmoid(-700) divides by e^700 + 1.
    let xs = [
        0.0,
        -0.0,
        inf,
        -inf,
        f64::NAN,
        1.0,
        -1.0,
        2.0,
        -2.0,
        1e-310,
        -1e-310,
        800.0,
        -800.0,
        1e300,
        -1e300,
        1e301,
        -1e301,
        -700.0,
        5e-324,
        -5e-324,
        // atan(-f64::MAX) was NaN (found by the sweep).
        f64::MAX,
        -f64::MAX,
        1e20,
        -1.5e20,
    ];
    let cases: [(UnaryOp, Reference); 19] = [
        (UnaryOp::Exp, f64::exp),
        (UnaryOp::Expm1, f64::exp_m1),
        (UnaryOp::Log, f64::ln),
        (UnaryOp::Log1p, f64::ln_1p),
        (UnaryOp::Sin, f64::sin),
        (UnaryOp::Cos, f64::cos),
        (UnaryOp::Tan, f64::tan),
        (UnaryOp::Sinh, f64::sinh),
        (UnaryOp::Cosh, f64::cosh),
        (UnaryOp::Tanh, f64::tanh),
        (UnaryOp::Asin, f64::asin),
        (UnaryOp::Acos, f64::acos),
        (UnaryOp::Atan, f64::atan),
        // Rust's asinh and acosh overflow to inf near f64::MAX: ln 2|x| there.
        (UnaryOp::Asinh, |x| {
            if x.abs() > 1e300 && x.is_finite() {
                (x.abs().ln() + std::f64::consts::LN_2).copysign(x)
            } else {
                x.asinh()
            }
        }),
        (UnaryOp::Acosh, |x| {
            if x > 1e300 && x.is_finite() {
                x.ln() + std::f64::consts::LN_2
            } else {
                x.acosh()
            }
        }),
        (UnaryOp::Atanh, f64::atanh),
        (UnaryOp::Cbrt, f64::cbrt),
        (UnaryOp::Sigmoid, |x| 1.0 / (1.0 + (-x).exp())),
        (UnaryOp::ErfInv, |x| {
            if x.abs() == 1.0 {
                x * f64::INFINITY
            } else {
                f64::NAN
            }
        }),
    ];
    for (op, reference) in cases {
        let got = run_unary(op, &xs);
        for (i, &x) in xs.iter().enumerate() {
            let want = reference(x);
            if op == UnaryOp::ErfInv && x.abs() != 1.0 && x.abs() <= 1.0 {
                continue; // finite values are in the vectors
            }
            let same = (want.is_nan() && got[i].is_nan())
                || (want == got[i] && want.is_sign_negative() == got[i].is_sign_negative())
                || (want.is_finite() && want != 0.0 && ulps(got[i], want) <= 1);
            assert!(same, "{op:?}({x:e}) = {:e}, want {want:e}", got[i]);
        }
    }
    // erf / erfc at the ends.
    let got = run_unary(UnaryOp::Erf, &[inf, -inf, -0.0, 7.0, -7.0]);
    assert_eq!(got[..2], [1.0, -1.0]);
    assert!(got[2] == 0.0 && got[2].is_sign_negative());
    assert_eq!(got[3..], [1.0, -1.0]);
    assert_eq!(
        run_unary(UnaryOp::Erfc, &[inf, -inf, 30.0, -7.0]),
        [0.0, 2.0, 0.0, 2.0]
    );
}

#[test]
fn f64_pow_and_atan2_special_values_follow_c99() {
    let inf = f64::INFINITY;
    let vals = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        2.0,
        -2.0,
        0.5,
        -0.5,
        3.0,
        inf,
        -inf,
        f64::NAN,
        1e301,
        1e308,
    ];
    let (mut a, mut b) = (vec![], vec![]);
    for &x in &vals {
        for &y in &vals {
            a.push(x);
            b.push(y);
        }
    }
    for (op, reference) in [
        (BinaryOp::Pow, f64::powf as fn(f64, f64) -> f64),
        (BinaryOp::Atan2, f64::atan2),
    ] {
        // atan2 is atan2(y = a, x = b), as Nx.atan2(a, b).
        let got = run_binary(op, &a, &b);
        for i in 0..a.len() {
            let want = reference(a[i], b[i]);
            let same = (want.is_nan() && got[i].is_nan())
                || (want == got[i] && want.is_sign_negative() == got[i].is_sign_negative());
            assert!(
                same,
                "{op:?}({:e}, {:e}) = {:e}, want {want:e}",
                a[i], b[i], got[i]
            );
        }
    }
}

#[test]
fn f64_trig_past_2_24_reduces_exactly() {
    // The three-part pi/2 reduction covers |x| < 2^28; its quadrant k passes 2^24 at
    // about 2.6e7. Mesa 22.3's lavapipe returned roundEven's double argument unchanged
    // from 2^24 up, and sin(1e8) came out 1.0.
    let mut x = vec![
        33554435.0,
        1.0e8,
        123456789.0,
        26353589.0,
        268435455.5,
        5.0e7 + 0.25,
    ];
    x.extend(x.clone().iter().map(|v| -v));
    let refs: [(UnaryOp, Reference); 3] = [
        (UnaryOp::Sin, f64::sin),
        (UnaryOp::Cos, f64::cos),
        (UnaryOp::Tan, f64::tan),
    ];
    for (op, f) in refs {
        let got = run_unary(op, &x);
        for (i, &v) in x.iter().enumerate() {
            assert!(
                ulps(got[i], f(v)) <= 1,
                "{op:?}({v}) = {}, host {}",
                got[i],
                f(v)
            );
        }
    }
}

#[test]
fn f64_round_is_exact_past_2_24() {
    // Nx.round: half away from zero. lavapipe's double trunc returned its argument from
    // 2^24 up.
    let x = [
        16777217.6,
        33554435.3,
        123456789.5,
        -123456788.5,
        4503599627370495.5,
        -4503599627370497.0,
        1.0e300,
        -0.3,
        2.5,
    ];
    let got = run_unary(UnaryOp::Round, &x);
    for (i, &v) in x.iter().enumerate() {
        let want = if v.round() == 0.0 { 0.0 } else { v.round() };
        assert_eq!(got[i].to_bits(), want.to_bits(), "round({v}) = {}", got[i]);
    }
}

#[test]
fn f64_atan2_of_operands_at_the_ends_of_the_range() {
    // The double-double steps overflowed near f64::MAX and lost subnormal ratios (NaN for
    // atan2(-f64::MAX, 45) and atan2(0.035, f64::MAX), found by the sweep).
    let vals = [
        f64::MAX,
        -f64::MAX,
        1e300,
        -3e200,
        45.0,
        -45.0,
        0.035,
        1e-300,
        -2.5e-310,
        5e-324,
        f64::MIN_POSITIVE,
        1.0,
    ];
    let (mut a, mut b) = (vec![], vec![]);
    for &y in &vals {
        for &x in &vals {
            a.push(y);
            b.push(x);
        }
    }
    let got = run_binary(BinaryOp::Atan2, &a, &b);
    for i in 0..a.len() {
        let want = a[i].atan2(b[i]);
        let close = want.to_bits() == got[i].to_bits()
            || (want != 0.0
                && want.is_sign_negative() == got[i].is_sign_negative()
                && ulps(got[i], want) <= 1);
        assert!(
            close,
            "atan2({:e}, {:e}) = {:e}, want {want:e}",
            a[i], b[i], got[i]
        );
    }
}
