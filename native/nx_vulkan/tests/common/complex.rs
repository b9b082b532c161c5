//! Complex-number helpers of the engine's complex tests (tests/complex.rs,
//! tests/complex_linalg.rs): upload/download as (re, im) pairs in f64, comparisons, and
//! the `complex` library's formulas (what Nx.BinaryBackend computes) in f64.

use super::*;
use nx_vulkan::{DType, Tensor};

pub type C = (f64, f64);

pub fn up(shape: &[usize], ty: DType, v: &[C]) -> Tensor {
    let flat: Vec<f64> = v.iter().flat_map(|&(a, b)| [a, b]).collect();
    match ty {
        DType::C64 => {
            let f: Vec<f32> = flat.iter().map(|&x| x as f32).collect();
            Tensor::from_bytes(shape, ty, &bytes(&f)).unwrap()
        }
        _ => Tensor::from_bytes(shape, ty, &bytes(&flat)).unwrap(),
    }
}

pub fn down(t: &Tensor) -> Vec<C> {
    let b = t.to_bytes().unwrap();
    let flat: Vec<f64> = match t.dtype {
        DType::C64 => values::<f32>(&b).iter().map(|&x| x as f64).collect(),
        DType::C128 => values::<f64>(&b),
        other => panic!("not complex: {other:?}"),
    };
    flat.chunks(2).map(|p| (p[0], p[1])).collect()
}

pub fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b
}

/// Exact agreement after rounding the reference to the output type.
pub fn assert_exact(got: &[C], want: &[C], ty: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let round = |x: f64| if ty == DType::C64 { x as f32 as f64 } else { x };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same(g.0, round(w.0)) && same(g.1, round(w.1)),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

/// Agreement within 2 ulps of each part (c128 sqrt and abs: NVIDIA's f64 sqrt formula
/// came out 1 ulp from the reference on the H200; lavapipe's is exact).
pub fn assert_ulps(got: &[C], want: &[C], what: &str) {
    let close = |a: f64, b: f64| same(a, b) || (a - b).abs() <= 2.0 * f64::EPSILON * b.abs();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(g.0, w.0) && close(g.1, w.1),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

/// Agreement within `rel` of the larger magnitude in the row (sums of products).
pub fn assert_near(got: &[C], want: &[C], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want
        .iter()
        .map(|w| w.0.abs().max(w.1.abs()))
        .fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.0 - w.0).abs() <= rel * scale && (g.1 - w.1).abs() <= rel * scale;
        assert!(ok, "{what}: element {i}: got {g:?}, want {w:?}");
    }
}

pub fn mul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.1 * b.0 + a.0 * b.1)
}

pub fn div(a: C, b: C) -> C {
    let den = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / den, (a.1 * b.0 - a.0 * b.1) / den)
}

pub fn cabs(z: C) -> f64 {
    let (x, y) = (z.0.abs(), z.1.abs());
    if z.0.is_nan() && z.1.is_nan() {
        f64::NAN
    } else if !z.0.is_finite() || !z.1.is_finite() {
        f64::INFINITY
    } else if x == 0.0 {
        y
    } else if y == 0.0 {
        x
    } else if x > y {
        x * (1.0 + y / x * (y / x)).sqrt()
    } else {
        y * (1.0 + x / y * (x / y)).sqrt()
    }
}

pub fn csqrt(z: C) -> C {
    let (r, i) = z;
    if r.is_nan() || i.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if i.is_infinite() {
        return (f64::INFINITY, i);
    }
    if r.is_infinite() {
        return if r > 0.0 {
            (f64::INFINITY, 0.0)
        } else {
            (0.0, f64::INFINITY)
        };
    }
    if r == 0.0 && i == 0.0 {
        return z;
    }
    let (x, y) = (r.abs(), i.abs());
    let w = if x >= y {
        x.sqrt() * (0.5 * (1.0 + (1.0 + y / x * (y / x)).sqrt())).sqrt()
    } else {
        y.sqrt() * (0.5 * (x / y + (1.0 + x / y * (x / y)).sqrt())).sqrt()
    };
    if r >= 0.0 {
        (w, i / (2.0 * w))
    } else {
        let w2 = if i >= 0.0 { w } else { -w };
        (i / (2.0 * w2), w2)
    }
}

/// Values whose f32 rounding is exact (so c64 and c128 references agree).
pub fn sample(n: usize, seed: u64) -> Vec<C> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let q = |r: &mut Rng| (r.uniform(-64.0, 64.0) * 16.0).round() / 16.0;
            (q(&mut r), q(&mut r))
        })
        .collect()
}
