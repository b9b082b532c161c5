//! A host model of shaders/common/math32x.glsl's `f32x_exp`, the exact f32 exp's double
//! path (the default on GPUs with fast f64, and the fast path's fallback elsewhere): the
//! same double operations in the same order, its table read from the shader source. Its
//! result rounded to f32 must be f64 exp rounded to f32 for every argument in the
//! double path's range [-200, 100] whose e^x is not within 2^-48 (relative) of a
//! rounding boundary of f32 (subnormal results included), whether or not the driver
//! contracts the series' products and sums into fma, and whether or not it splits the
//! explicit fma calls into a product and a sum (Vulkan allows both). The sampled test
//! runs every 61st f32 of the range; the exhaustive one (`--ignored`) every f32. Keep it
//! in step with the shader. (tests/exp32.rs checks the kernels themselves.)

/// The shader's table of 2^(j/32), parsed from `f32x_exp_init`.
fn shader_table() -> Vec<f64> {
    let src = include_str!("../../../shaders/common/math32x.glsl");
    let start = src.find("double[](").expect("f32x_exp_init's table") + "double[](".len();
    let end = start + src[start..].find(");").unwrap();
    src[start..end]
        .split(',')
        .map(|v| v.trim().trim_end_matches("lf").parse::<f64>().unwrap())
        .collect()
}

/// x_exp_core, f32x_exp for x in [-200, 100]; `contract` evaluates the series' steps as
/// fma, as a driver may, and `split` the explicit fma calls as a product and a sum.
fn model(x: f64, table: &[f64], contract: bool, split: bool) -> f64 {
    const LN2_HI: f64 = 6.931_471_803_691_238e-1;
    const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    let step = |q: f64, r: f64, c: f64| if contract { q.mul_add(r, c) } else { q * r + c };
    let fma = |a: f64, b: f64, c: f64| if split { a * b + c } else { a.mul_add(b, c) };
    let shifted = fma(x, 46.166_241_308_446_83, SHIFT);
    let k = shifted - SHIFT;
    let ki = shifted.to_bits() as u32 as i32;
    assert_eq!(k, ki as f64, "k of {x:e}");
    let hi = LN2_HI * 0.03125;
    let lo = LN2_LO * 0.03125;
    let r = fma(-k, lo, fma(-k, hi, x));
    let mut q = 1.388_888_888_888_889e-3;
    for c in [
        8.333_333_333_333_333e-3,
        4.166_666_666_666_666_4e-2,
        1.666_666_666_666_666_6e-1,
        0.5,
    ] {
        q = step(q, r, c);
    }
    let s = fma(r * r, q, r);
    let t = table[(ki & 31) as usize].to_bits();
    let scaled = f64::from_bits(t.wrapping_add(((ki >> 5) as i64 as u64) << 52));
    fma(scaled, s, scaled)
}

/// Whether e^x (the f64 reference e) lies within 2^-48 of a midpoint between two f32
/// neighbours, where neither double evaluation decides the rounding.
fn near_boundary(e: f64) -> bool {
    let f = e as f32;
    let (lo, hi) = if (f as f64) < e {
        (f, f32::from_bits(f.to_bits() + 1))
    } else {
        (f32::from_bits(f.to_bits() - 1), f)
    };
    let mid = (lo as f64 + hi as f64) / 2.0;
    ((e - mid) / e).abs() < 2f64.powi(-48)
}

/// Checks every `stride`th f32 in [-200, 100]; returns (checked, near a boundary).
fn check(stride: usize) -> (usize, usize) {
    let table = shader_table();
    let (mut checked, mut near) = (0, 0);
    for bits in (0..=u32::MAX).step_by(stride) {
        let x = f32::from_bits(bits);
        if !(-200.0..=100.0).contains(&x) {
            continue;
        }
        let e = (x as f64).exp();
        if near_boundary(e) {
            near += 1;
            continue;
        }
        for (contract, split) in [(false, false), (true, false), (false, true), (true, true)] {
            let m = model(x as f64, &table, contract, split);
            assert_eq!(
                m as f32, e as f32,
                "exp({x:e}) (bits {bits:#x}, contract {contract}, split {split}): model {m:e}, f64 {e:e}"
            );
        }
        checked += 1;
    }
    (checked, near)
}

#[test]
fn table_is_two_to_the_j_over_32() {
    let table = shader_table();
    assert_eq!(table.len(), 32);
    for (j, t) in table.iter().enumerate() {
        let want = (j as f64 / 32.0).exp2();
        let ulps = (t.to_bits() as i64 - want.to_bits() as i64).abs();
        assert!(ulps <= 1, "2^({j}/32): table {t:e}, exp2 {want:e}");
    }
    assert_eq!(table[16], std::f64::consts::SQRT_2);
}

#[test]
fn double_exp_rounds_as_f64_exp_sampled() {
    let (checked, near) = check(61);
    eprintln!("checked {checked}, near a boundary {near}");
    assert!(checked > 30_000_000);
}

#[test]
#[ignore = "every f32 in [-200, 100]: minutes"]
fn double_exp_rounds_as_f64_exp_exhaustive() {
    let (checked, near) = check(1);
    eprintln!("checked {checked}, near a boundary {near}");
}
