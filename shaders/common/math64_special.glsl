// f64 rsqrt, cbrt, pow and the error functions, in double-double (see math64.glsl).

// Nx's rsqrt: 1 / sqrt(x), each step correctly rounded (not the driver's inversesqrt,
// which Vulkan lets be 2 ulp off).
double f64_rsqrt(double x) {
    if (x == 0.0lf) return 1.0lf / x;  // +-inf (a fused rsqrt may give NaN for -0)
    return 1.0lf / sqrt(x);
}

double f64_cbrt(double x) {
    if (x == 0.0lf || isnan(x) || isinf(x)) return x;
    double a = abs(x);
    // a = v * 2^(3q) with v in [1, 8): the cube root is cbrt(v) * 2^q.
    int e = dd_exponent(a);
    int q = e >= 0 ? e / 3 : -((2 - e) / 3);
    double v = dd_scale_down(dvec2(a, 0.0lf), 3 * q).x;
    double y = double(pow(float(v), 1.0 / 3.0));  // ~2^-22
    [[dont_unroll]] for (int i = 0; i < 2; i++) y -= (y * y * y - v) / (3.0lf * y * y);  // Newton: ~2^-52
    // A last Newton step with the residual y^3 - v computed in double-double.
    dvec2 d = dd_sub(dd_mul_d(dd_two_prod(y, y), y), dvec2(v, 0.0lf));
    y = dd_quick_sum(y, -d.x / (3.0lf * y * y)).x;
    return f64_copysign(y * dd_pow2(q), x);
}

// |a|^b as a double for finite a != 0, exp(b log|a|) with the product in double-double.
double f64_pow_magnitude(double a, double b) {
    // Beyond 1e290 |b log a| > 1e274 (|log a| >= 1.1e-16 for a != 1): over- or underflow.
    if (a == 1.0lf) return 1.0lf;  // (-1)^b for huge b: the sign is applied by the caller
    if (abs(b) > 1.0e290lf) return ((a > 1.0lf) == (b > 0.0lf)) ? f64_inf() : 0.0lf;
    dvec2 p = dd_mul_d(dd_log(dvec2(abs(a), 0.0lf)), b);
    if (p.x > 710.0lf) return f64_inf();
    if (p.x < -746.0lf) return 0.0lf;
    int k;
    dvec2 m = dd_exp_parts(p, k);
    return dd_scale(m, k);
}

// pow with C99 semantics for a negative base, zeros, integral and infinite exponents
// (as nxv_pow in math.glsl).
double f64_pow(double a, double b) {
    if (b == 0.0lf || a == 1.0lf) return 1.0lf;
    if (isnan(a) || isnan(b)) return a + b;
    double m = abs(a);
    if (isinf(b)) {
        if (m == 1.0lf) return 1.0lf;
        return ((m > 1.0lf) == (b > 0.0lf)) ? f64_inf() : 0.0lf;
    }
    bool integral = floor(b) == b;
    bool odd = integral && mod(abs(b), 2.0lf) == 1.0lf;
    bool neg = (unpackDouble2x32(a).y >> 31) != 0u;
    double r;
    if (m == 0.0lf) r = b > 0.0lf ? 0.0lf : f64_inf();
    else if (isinf(m)) r = b > 0.0lf ? f64_inf() : 0.0lf;
    else {
        if (neg && !integral) return f64_nan();
        r = f64_pow_magnitude(m, b);
    }
    return (neg && odd) ? -r : r;
}

// ---- the error functions ----

// exp(-x^2) = m * 2^k (m returned), with x^2 exact in double-double.
dvec2 dd_exp_neg_square(double x, out int k) {
    return dd_exp_parts(-dd_two_prod(x, x), k);
}

// erf(x) = m * 2^k for |x| < 6, from the series that has no cancellation:
// erf(x) = 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1)).
dvec2 dd_erf_series(double x, out int k) {
    dvec2 two_x2 = dd_two_prod(x, x) * 2.0lf;
    dvec2 t = dvec2(x, 0.0lf);
    dvec2 s = t;
    [[dont_unroll]] for (int n = 1; n < 400; n++) {
        t = dd_div_d(dd_mul(t, two_x2), double(2 * n + 1));
        s = dd_add(s, t);
        if (abs(t.x) <= abs(s.x) * 1.0e-25lf) break;
    }
    dvec2 m = dd_exp_neg_square(x, k);
    return dd_mul(dd_mul(s, m), DD_2_OVER_SQRTPI);
}

// erfc(x) = m * 2^k for x >= 3, from the continued fraction
// erfc(x) = e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + (3/2) / ...))),
// 60 terms (relative error below 1e-24 at x = 3, less beyond).
dvec2 dd_erfc_fraction(double x, out int k) {
    dvec2 f = dvec2(x, 0.0lf);
    [[dont_unroll]] for (int n = 60; n >= 1; n--) f = dd_add_d(dd_div(dvec2(0.5lf * double(n), 0.0lf), f), x);
    dvec2 m = dd_exp_neg_square(x, k);
    return dd_div(dd_mul(m, DD_1_OVER_SQRTPI), f);
}

// erf(x) as a double-double, for finite x.
dvec2 dd_erf(double x) {
    double a = abs(x);
    if (a >= 6.0lf) return dvec2(f64_copysign(1.0lf, x), 0.0lf);
    int k;
    if (a < 3.0lf) {
        dvec2 m = dd_erf_series(x, k);
        return m * dd_pow2(k);
    }
    dvec2 m = dd_erfc_fraction(a, k);
    dvec2 r = dd_add_d(-(m * dd_pow2(k)), 1.0lf);
    return x < 0.0lf ? -r : r;
}

// erfc(x) for x >= 0 as m * 2^k (1 - erf below 3, where erf < 1 - 2e-5: no digits lost
// in double-double; the continued fraction above).
dvec2 dd_erfc_positive(double x, out int k) {
    if (x < 3.0lf) {
        dvec2 m = dd_erf_series(x, k);
        dvec2 r = dd_add_d(-(m * dd_pow2(k)), 1.0lf);
        k = 0;
        return r;
    }
    return dd_erfc_fraction(x, k);
}

double f64_erf(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    if (isinf(x)) return f64_copysign(1.0lf, x);
    return dd_erf(x).x;
}

double f64_erfc(double x) {
    if (isnan(x)) return x;
    if (isinf(x)) return x > 0.0lf ? 0.0lf : 2.0lf;
    if (x < 0.5lf) return dd_add_d(-dd_erf(x), 1.0lf).x;
    if (x > 27.3lf) return 0.0lf;  // erfc(27.3) ~ 5e-326 is below the subnormals
    int k;
    dvec2 m = dd_erfc_positive(x, k);
    return dd_scale(m, k);
}

// Giles' single-precision approximation of erf_inv(a), 0 < a < 1, evaluated in double
// exactly as Nx's `Complex.erf_inv` writes it (the start of f64_erf_inv's iteration).
double erf_inv_giles(double a) {
    double w = -f64_log((1.0lf - a) * (1.0lf + a));
    double p;
    if (w < 5.0lf) {
        w -= 2.5lf;
        p = 2.81022636e-08lf;
        p = 3.43273939e-07lf + p * w;
        p = -3.5233877e-06lf + p * w;
        p = -4.39150654e-06lf + p * w;
        p = 0.00021858087lf + p * w;
        p = -0.00125372503lf + p * w;
        p = -0.00417768164lf + p * w;
        p = 0.246640727lf + p * w;
        p = 1.50140941lf + p * w;
    } else {
        w = sqrt(w) - 3.0lf;
        p = -0.000200214257lf;
        p = 0.000100950558lf + p * w;
        p = 0.00134934322lf + p * w;
        p = -0.00367342844lf + p * w;
        p = 0.00573950773lf + p * w;
        p = -0.0076224613lf + p * w;
        p = 0.00943887047lf + p * w;
        p = 1.00167406lf + p * w;
        p = 2.83297682lf + p * w;
    }
    return p * a;
}

// f32 erf_inv: Nx's single-precision approximation in double, rounded once by the caller
// to f32 - Nx.BinaryBackend's f32 values (its reference for every float type).
double f64_erf_inv_giles(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    if (a == 1.0lf) return f64_copysign(f64_inf(), x);
    return f64_copysign(erf_inv_giles(a), x);
}

// erf_inv: Giles' single-precision approximation as the start, then Newton steps on
// erf(y) - a (below 0.5) or (1 - a) - erfc(y) (above, where 1 - a is exact and erfc
// keeps its relative accuracy), each doubling the correct digits.
double f64_erf_inv(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    if (a == 1.0lf) return f64_copysign(f64_inf(), x);
    // Beyond the approximation's range (1 - a < 6e-8) the start can be 5% off and the
    // first steps gain less than a digit each: iterate to convergence.
    double y = erf_inv_giles(a);
    [[dont_unroll]] for (int i = 0; i < 30; i++) {
        dvec2 f;
        int k;
        if (a < 0.5lf) {
            f = dd_add_d(dd_erf(y), -a);
        } else {
            dvec2 m = dd_erfc_positive(y, k);
            f = dd_sub(dvec2(1.0lf - a, 0.0lf), m * dd_pow2(k));
        }
        // erf'(y) = 2/sqrt(pi) e^(-y^2)
        dvec2 d = dd_mul(dd_exp_neg_square(y, k), DD_2_OVER_SQRTPI) * dd_pow2(k);
        double step = f.x / d.x;
        y -= step;
        // Converged once a step is below half an ulp (y no longer changes).
        if (abs(step) <= abs(y) * 1.2e-16lf) break;
    }
    return f64_copysign(y, x);
}
