//! f64 references for erf, erfc and erf^-1 (series, continued fraction, bisection),
//! for the unary tests.

use std::f64::consts::PI;

/// erf by its everywhere-positive series (no cancellation) below 2.5, 1 - erfc above.
pub fn erf_ref(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 0.0 {
        return -erf_ref(-x);
    }
    if x >= 2.5 {
        return 1.0 - erfc_ref(x);
    }
    // erf(x) = 2/sqrt(pi) exp(-x^2) sum_n 2^n x^(2n+1) / (1*3*...*(2n+1))
    let (mut term, mut sum) = (x, x);
    for n in 1..200 {
        term *= 2.0 * x * x / (2 * n + 1) as f64;
        sum += term;
        if term < 1e-17 * sum {
            break;
        }
    }
    2.0 / PI.sqrt() * (-x * x).exp() * sum
}

/// erfc by its continued fraction from 2.5 up, 1 - erf below.
pub fn erfc_ref(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x < 2.5 {
        return 1.0 - erf_ref(x);
    }
    // erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...))))
    let mut f = x;
    for k in (1..=200).rev() {
        f = x + (k as f64 / 2.0) / f;
    }
    (-x * x).exp() / PI.sqrt() / f
}

/// erf^-1 by bisection on erf (|y| <= 0.5) or on erfc (so 1 - |y| stays exact).
pub fn erf_inv_ref(y: f64) -> f64 {
    if y.is_nan() || y.abs() > 1.0 {
        return f64::NAN;
    }
    if y == 0.0 {
        return y;
    }
    if y.abs() == 1.0 {
        return y * f64::INFINITY;
    }
    let a = y.abs();
    let (mut lo, mut hi) = (0.0f64, 7.0f64);
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        let below = if a <= 0.5 {
            erf_ref(mid) < a
        } else {
            erfc_ref(mid) > 1.0 - a
        };
        if below {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi) * y.signum()
}
