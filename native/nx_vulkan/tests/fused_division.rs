//! Division by a folded reduction in fused f32 programs (softmax's exp(x - max) / sum):
//! the kernel multiplies by the divisor's reciprocal in double, computed once per row,
//! instead of dividing per element (fused.comp's `div_by_reciprocal`). Its claim, that
//! a * RN64(1 / b) rounded to f32 is a / b rounded to f32 wherever the quotient is normal,
//! is checked on the host on quotients as close to an f32 rounding boundary as two f32
//! operands can put them; then the kernel on those operands and on the special values
//! whose quotients take the per-element division, against f64 division rounded once.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::BinaryOp;
use nx_vulkan::ops::fused::{fused, FusedOp::*, FusedProgram};
use nx_vulkan::ops::reduce::ReduceOp;
use nx_vulkan::DType;

/// a / b rounded once to f32 (f64 division rounds a ratio of two f32 values so that a
/// second rounding to f32 is innocuous: 53 >= 2 * 24 + 2).
fn quotient(a: f32, b: f32) -> f32 {
    (a as f64 / b as f64) as f32
}

fn by_reciprocal(a: f32, b: f32) -> f32 {
    (a as f64 * (1.0 / b as f64)) as f32
}

/// Pairs (a, b) whose quotient lies within c 2^-48 (c <= 8, relative) of a midpoint
/// between two floats, the nearest that 24-bit operands allow: for an odd 24-bit B and
/// odd M of 25 bits with B M = c (mod 2^25), a = (B M - c) / 2^s has 24 bits and a / B
/// = (M - c / B) 2^-s. Scaled by powers of two over the normal range of the quotient.
fn near_midpoints(rng: &mut Rng, n: usize) -> Vec<(f32, f32)> {
    let mut pairs = Vec::with_capacity(n);
    while pairs.len() < n {
        let b = (rng.int(1 << 22, (1 << 23) - 1) as u64) * 2 + 1;
        let c = rng.int(-8, 8);
        // M = c / B mod 2^25: B's inverse by Newton's iteration (each step doubles the
        // bits that are right).
        let mut inv: u64 = b;
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(b.wrapping_mul(inv)));
        }
        let m = ((c as u64).wrapping_mul(inv)) & ((1 << 25) - 1);
        if c == 0 || m < (1 << 24) || m.is_multiple_of(2) {
            continue;
        }
        let p = (b * m) as i64 - c;
        let s = 64 - (p as u64).leading_zeros() as i32 - 24;
        assert_eq!(
            p % (1 << s),
            0,
            "B M - c is not a 24-bit number times 2^{s}"
        );
        let a = (p >> s) as f64;
        // a / b = M 2^-s (1 - c / (B M)): scale both so the quotient spans the normal range.
        let ea = rng.int(-60, 60) as i32;
        let eb = rng.int(-60, 60) as i32;
        let sa = if rng.next_u32().is_multiple_of(2) {
            1.0
        } else {
            -1.0
        };
        pairs.push((
            (sa * a * 2f64.powi(ea)) as f32,
            (b as f64 * 2f64.powi(eb)) as f32,
        ));
    }
    pairs
}

#[test]
fn the_reciprocal_product_rounds_as_the_division_on_the_host() {
    let mut rng = Rng::new(41);
    let mut checked = 0;
    let mut pairs = near_midpoints(&mut rng, 1 << 20);
    // And operands of any magnitude.
    pairs.extend((0..1 << 20).map(|_| {
        let a = f32::from_bits(rng.next_u32() & 0x7F7F_FFFF | 0x0080_0000);
        let b = f32::from_bits(rng.next_u32() & 0x7F7F_FFFF | 0x0080_0000);
        (a, b)
    }));
    for (a, b) in pairs {
        let want = quotient(a, b);
        if !want.is_normal() {
            continue; // subnormal, zero or infinite quotients divide per element
        }
        assert_eq!(
            by_reciprocal(a, b).to_bits(),
            want.to_bits(),
            "{a:e} / {b:e}: {:e} through the reciprocal, {want:e} divided",
            by_reciprocal(a, b)
        );
        checked += 1;
    }
    assert!(checked > 1 << 20, "only {checked} normal quotients");
}

/// x / sum(y) over rows of `cols`, each y row one divisor followed by zeros (so the sum
/// is the divisor), fused; checked against f64 division rounded once.
fn check_rows(xs: &[f32], divisors: &[f32], cols: usize) {
    let rows = divisors.len();
    let mut ys = vec![0f32; rows * cols];
    for (r, &d) in divisors.iter().enumerate() {
        ys[r * cols] = d;
    }
    let shape = [rows, cols];
    let x = upload(&shape, DType::F32, xs);
    let y = upload(&shape, DType::F32, &ys);
    let p = FusedProgram {
        dtype: DType::F32,
        shape: shape.to_vec(),
        row_axes: 1,
        slots: vec![
            Input(0),
            Input(1),
            Reduce(ReduceOp::Sum, 1),
            Binary(BinaryOp::Divide, 0, 2),
        ],
        per_row: false,
    };
    let got: Vec<f32> = download(&fused(&p, &[&x, &y]).unwrap());
    let mut bad = Vec::new();
    for (i, (&g, &a)) in got.iter().zip(xs).enumerate() {
        // The row's sum: its divisor plus zeros (-0 + 0 is +0).
        let b = divisors[i / cols] + 0.0;
        let want = quotient(a, b);
        if g.to_bits() != want.to_bits() && !(g.is_nan() && want.is_nan()) {
            bad.push(format!("{a:e} / {b:e} = {g:e}, want {want:e}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} quotients wrong:\n{}",
        bad.len(),
        got.len(),
        bad[..bad.len().min(20)].join("\n")
    );
}

#[test]
fn division_by_a_folded_sum_rounds_once() {
    let mut rng = Rng::new(42);
    let cols = 4;
    // Near-midpoint quotients: each row's four numerators share one divisor (one pair's
    // and three that only share its b).
    let pairs = near_midpoints(&mut rng, 1 << 16);
    let divisors: Vec<f32> = pairs.iter().map(|p| p.1).collect();
    let mut xs = Vec::with_capacity(pairs.len() * cols);
    for (a, _) in &pairs {
        xs.push(*a);
        for _ in 1..cols {
            xs.push(f32::from_bits(rng.next_u32() & 0xBF7F_FFFF | 0x0080_0000));
        }
    }
    check_rows(&xs, &divisors, cols);
}

#[test]
fn division_by_a_folded_sum_keeps_special_values() {
    let specials = [
        0.0f32,
        -0.0,
        1e-45,
        -3e-40,
        1.1754942e-38,
        1.0,
        -2.5,
        3.4028235e38,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        1e-30,
        7e25,
    ];
    let cols = specials.len();
    let mut xs = Vec::new();
    let mut divisors = Vec::new();
    for &d in &specials {
        divisors.push(d);
        xs.extend_from_slice(&specials);
    }
    check_rows(&xs, &divisors, cols);
}
