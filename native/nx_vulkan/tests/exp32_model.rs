//! A host model of shaders/common/exp32.glsl's fast path: the same f32 operations in the
//! same order (Rust's f32 `+`, `-`, `*` round to nearest as Vulkan's do), optionally
//! flushing every subnormal intermediate to zero as NVIDIA's driver does. Wherever the
//! model answers, its result must be f64 exp rounded to f32, and its splits must be
//! exact. The sampled test runs every 997th f32; the exhaustive one (`--ignored`, about
//! 10 minutes) every f32 below 87 in magnitude. Keep it in step with the shader.

const INV_L: u32 = 0x4238_aa3b; // RN(32 / ln2)
const L1: u32 = 0x3cb1_6000; // ln2 / 32 to 11 bits
const L2: u32 = 0x3710_c000; // the next 10
const L3: u32 = 0xae82_e308; // RN(ln2 / 32 - L1 - L2)
const EPS: u32 = 0x2e80_0000; // 2^-34

fn head(x: f32) -> f32 {
    f32::from_bits(x.to_bits() & 0xFFFF_F000)
}

/// exp32_init's table: 2^(j/32) as th's 12-bit head, its tail, and tl.
fn table() -> Vec<[f32; 3]> {
    (0..32)
        .map(|j| {
            let t = (j as f64 * std::f64::consts::LN_2 / 32.0).exp();
            let th = t as f32;
            [head(th), th - head(th), (t - th as f64) as f32]
        })
        .collect()
}

/// exp32_fast; `flush` zeroes subnormal intermediates. Panics where a split the proof
/// relies on is inexact (checked without flushing).
fn fast(x: f32, tab: &[[f32; 3]], flush: bool) -> Option<f32> {
    let f = |v: f32| {
        if flush && v != 0.0 && v.abs() < f32::MIN_POSITIVE {
            0.0f32.copysign(v)
        } else {
            v
        }
    };
    let c = f32::from_bits;
    // The shader's `!(abs(x) < 87.0)`, which sends NaN to the double path too.
    if x.is_nan() || x.abs() >= 87.0 {
        return None;
    }
    let k = f(x * c(INV_L)).round_ties_even();
    let t1 = f(x - f(k * c(L1)));
    let p2 = f(k * c(L2));
    if !flush {
        assert_eq!(t1 as f64, x as f64 - k as f64 * c(L1) as f64, "t1 of {x:e}");
        assert_eq!(p2 as f64, k as f64 * c(L2) as f64, "p2 of {x:e}");
    }
    let r_hi = f(t1 - p2);
    let bv = f(r_hi - t1);
    let r_lo = f(f(f(t1 - f(r_hi - bv)) + f(-p2 - bv)) - f(k * c(L3)));
    let ki = k as i32;
    let [ta, tb, tl] = tab[(ki & 31) as usize];
    let m = ki >> 5;
    let th = ta + tb;
    let r1 = head(r_hi);
    let r2 = f(r_hi - r1);
    let s_hi = f(th * r_hi);
    let s_lo = f(f(f(f(f(ta * r1) - s_hi) + f(ta * r2)) + f(tb * r1)) + f(tb * r2));
    if !flush {
        assert_eq!(
            s_hi as f64 + s_lo as f64,
            th as f64 * r_hi as f64,
            "product of {x:e}"
        );
    }
    let r = f(r_hi + r_lo);
    let p = f(f(f(f(f(f(r * (1.0 / 120.0)) + 1.0 / 24.0) * r) + 1.0 / 6.0) * r) + 0.5);
    let q = f(f(p * f(r * r)) + r_lo);
    let low = f(f(f(th * q) + s_lo) + f(f(tl * f(r_hi + q)) + tl));
    let a = f(th + s_hi);
    let b = f(s_hi - f(a - th));
    let cc = f(b + low);
    let res = f(a + cc);
    let tt = f(cc - f(res - a));
    let rb = res.to_bits();
    let mut half_ulp = f32::from_bits((rb & 0x7F80_0000) - (24 << 23));
    if rb & 0x7F_FFFF == 0 && tt < 0.0 {
        half_ulp *= 0.5;
    }
    if f(tt.abs() + f(c(EPS) * res)) >= half_ulp || tt.is_nan() {
        return None;
    }
    Some(res * f32::from_bits(((m + 127) as u32) << 23))
}

/// Runs the model on every `step`-th f32 bit pattern: (answered, sent to the double path).
fn sweep(step: usize, flush: bool) -> (u64, u64) {
    let tab = table();
    let (mut answered, mut declined) = (0, 0);
    for b in (0..=u32::MAX).step_by(step) {
        let x = f32::from_bits(b);
        if x.is_nan() || x.abs() >= 87.0 {
            continue;
        }
        match fast(x, &tab, flush) {
            None => declined += 1,
            Some(y) => {
                answered += 1;
                let want = (x as f64).exp() as f32;
                assert_eq!(
                    y.to_bits(),
                    want.to_bits(),
                    "exp({x:e}) ({b:#010x}): {y:e}, want {want:e}"
                );
            }
        }
    }
    // The double path stays rare: under 0.1% of the arguments.
    assert!(
        declined * 1000 < answered + declined,
        "{declined} of {answered} declined"
    );
    (answered, declined)
}

#[test]
fn model_agrees_with_f64_exp_on_a_sample() {
    sweep(997, false);
    sweep(997, true);
}

#[test]
#[ignore = "every f32 argument: about 10 minutes on 2 cores"]
fn model_agrees_with_f64_exp_everywhere() {
    for flush in [false, true] {
        let (answered, declined) = sweep(1, flush);
        eprintln!("flush {flush}: {answered} answered, {declined} to the double path");
    }
}
