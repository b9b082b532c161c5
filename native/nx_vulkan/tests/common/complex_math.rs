//! The `complex` library's transcendental functions (what Nx.BinaryBackend computes for
//! exp, log, sin, ... pow of complex numbers), in f64 over Rust's libm, which is the
//! libm Erlang's :math calls. The reference of tests/complex_math.rs.

use super::complex::{cabs, csqrt, div, mul, C};
use std::f64::consts::PI;

const NAN2: C = (f64::NAN, f64::NAN);
const ONE: C = (1.0, 0.0);
const I: C = (0.0, 1.0);
const MINUS_I: C = (-0.0, -1.0);

fn add(a: C, b: C) -> C {
    (a.0 + b.0, a.1 + b.1)
}

fn sub(a: C, b: C) -> C {
    (a.0 - b.0, a.1 - b.1)
}

fn finite(z: C) -> bool {
    z.0.is_finite() && z.1.is_finite()
}

/// Complex.divide: a finite value over a real infinity is 0.
fn cdiv(a: C, b: C) -> C {
    if finite(a) && b.0.is_infinite() && b.1 == 0.0 {
        return (0.0, 0.0);
    }
    div(a, b)
}

fn log_real(r: f64) -> f64 {
    if r == 0.0 {
        f64::NEG_INFINITY
    } else {
        r.ln()
    }
}

/// Complex.atan2(b, a) of reals.
fn atan2(b: f64, a: f64) -> f64 {
    if a.is_finite() && b.is_finite() {
        return b.atan2(a);
    }
    if a.is_nan() || b.is_nan() {
        return f64::NAN;
    }
    if b.is_infinite() {
        let s = b.signum();
        return match a {
            a if a == f64::INFINITY => s * (PI / 4.0),
            a if a == f64::NEG_INFINITY => s * (3.0 * PI) / 4.0,
            _ => s * (PI / 2.0),
        };
    }
    if a > 0.0 {
        0.0
    } else {
        PI
    }
}

/// Complex.phase.
fn phase(z: C) -> f64 {
    let (x, y) = z;
    match (x.is_finite(), y.is_finite()) {
        (false, true) if x.is_nan() => f64::NAN,
        (false, true) => {
            if x > 0.0 {
                0.0
            } else {
                PI
            }
        }
        (false, false) if x.is_infinite() && y.is_infinite() => match (x > 0.0, y > 0.0) {
            (true, true) => PI / 4.0,
            (true, false) => -PI / 4.0,
            (false, true) => 3.0 * PI / 4.0,
            (false, false) => 5.0 * PI / 4.0,
        },
        _ if x.is_infinite() => f64::NAN,
        _ if y.is_infinite() => y.signum() * PI / 2.0,
        _ if y.is_nan() => f64::NAN,
        _ => atan2(y, x),
    }
}

pub fn exp(z: C) -> C {
    if z.0 == f64::NEG_INFINITY {
        return (0.0, 0.0);
    }
    if z.0 == f64::INFINITY && !z.1.is_infinite() {
        return (z.0, z.0 * z.1);
    }
    if !finite(z) {
        return NAN2;
    }
    let rho = z.0.exp();
    (rho * z.1.cos(), rho * z.1.sin())
}

pub fn log(z: C) -> C {
    (log_real(cabs(z)), atan2(z.1, z.0))
}

pub fn sin(z: C) -> C {
    if !z.0.is_finite() || z.1.is_nan() {
        return NAN2;
    }
    if z.1.is_infinite() {
        return (z.0 * z.1, z.1);
    }
    (z.0.sin() * z.1.cosh(), z.0.cos() * z.1.sinh())
}

pub fn cos(z: C) -> C {
    if !z.0.is_finite() || z.1.is_nan() {
        return NAN2;
    }
    if z.1.is_infinite() {
        return (f64::INFINITY, -z.1 * z.0);
    }
    (z.0.cos() * z.1.cosh(), -z.0.sin() * z.1.sinh())
}

pub fn sinh(z: C) -> C {
    cdiv(sub(exp(z), exp((-z.0, -z.1))), (2.0, 0.0))
}

pub fn cosh(z: C) -> C {
    cdiv(add(exp(z), exp((-z.0, -z.1))), (2.0, 0.0))
}

pub fn asin(z: C) -> C {
    if !finite(z) {
        return NAN2;
    }
    let t = add(mul(I, z), csqrt(sub(ONE, mul(z, z))));
    mul(MINUS_I, log(t))
}

pub fn acos(z: C) -> C {
    if !finite(z) {
        return NAN2;
    }
    mul(MINUS_I, log(add(z, csqrt(sub(mul(z, z), ONE)))))
}

pub fn atan(z: C) -> C {
    let iz = mul(I, z);
    mul(
        mul((0.5, 0.0), I),
        sub(log(sub(ONE, iz)), log(add(ONE, iz))),
    )
}

pub fn asinh(z: C) -> C {
    log(add(z, csqrt(add(mul(z, z), ONE))))
}

pub fn acosh(z: C) -> C {
    log(add(z, csqrt(sub(mul(z, z), ONE))))
}

pub fn atanh(z: C) -> C {
    mul((0.5, 0.0), log(cdiv(add(ONE, z), sub(ONE, z))))
}

fn from_polar(r: f64, phi: f64) -> C {
    if phi == 0.0 {
        return (r, 0.0);
    }
    let (s, c) = (phi.sin(), phi.cos());
    if r.is_infinite() {
        if s == PI.sin() {
            return (r * c, 0.0);
        }
        if c.abs() == (PI / 2.0).cos() {
            return (0.0, r * s);
        }
    }
    mul((r, 0.0), (c, s))
}

pub fn cbrt(z: C) -> C {
    let r = cabs(z);
    let root = if r.is_finite() { r.powf(1.0 / 3.0) } else { r };
    from_polar(root, phase(z) / 3.0)
}

pub fn pow(x: C, y: C) -> C {
    let x_zero = x.0 == 0.0 && x.1 == 0.0;
    if x_zero && y.0 == f64::INFINITY && y.1 == 0.0 {
        return (0.0, 0.0);
    }
    if !finite(x) || !finite(y) {
        return NAN2;
    }
    if x_zero {
        return if y.0 == 0.0 && y.1 == 0.0 {
            ONE
        } else {
            (0.0, 0.0)
        };
    }
    if y == (1.0, 0.0) {
        return x;
    }
    if y == (-1.0, 0.0) {
        return cdiv(ONE, x);
    }
    let (rho, theta) = (cabs(x), phase(x));
    let s = rho.powf(y.0) * (-y.1 * theta).exp();
    let r = y.0 * theta + y.1 * log_real(rho);
    (s * r.cos(), s * r.sin())
}

/// Nx's definition of each unary op on complex numbers (Nx.Shared.unary_math_funs).
pub fn unary_ref(name: &str, z: C) -> C {
    match name {
        "exp" => exp(z),
        "expm1" => sub(exp(z), ONE),
        "log" => log(z),
        "log1p" => log(add(z, ONE)),
        "sigmoid" => cdiv(ONE, add(exp((-z.0, -z.1)), ONE)),
        "sin" => sin(z),
        "cos" => cos(z),
        "tan" => cdiv(sin(z), cos(z)),
        "sinh" => sinh(z),
        "cosh" => cosh(z),
        "tanh" => cdiv(sinh(z), cosh(z)),
        "asin" => asin(z),
        "acos" => acos(z),
        "atan" => atan(z),
        "asinh" => asinh(z),
        "acosh" => acosh(z),
        "atanh" => atanh(z),
        "rsqrt" => cdiv(ONE, csqrt(z)),
        "cbrt" => cbrt(z),
        other => panic!("no reference for {other}"),
    }
}
