// f32 math in plain double: the f32 (f16, bf16) modules of the f64 library
// (`f32_math_*`, EXACT_VIA_F64) call these instead of the double-double functions of
// math64*.glsl. Arguments are f32 values; results are doubles within about 2^-46
// relative, which the caller rounds once to f32: the correctly rounded f32 result but
// for arguments whose exact result lies that close to an f32 rounding boundary. That is
// Nx.BinaryBackend's f32 value (it computes in double and rounds once) wherever Nx's
// double formula is itself accurate; Nx's expm1 (exp(x) - 1) and log1p (log(x + 1))
// lose digits for tiny x, where ours stay correct. At a fraction of the cost of
// double-double (the H200 runs f32 exp at a third of its built-in's speed).
//
// Series are from the definitions (as in math64.glsl); ranges are cut where an f32
// result is already decided (exp overflows f32 above 89, erf rounds to 1 beyond 4, ...).

// ln 2 in two parts: LN2_HI has 32 significant bits, so k * LN2_HI is exact for |k| < 2^21.
const double LN2_HI = 6.93147180369123816490e-01lf;
const double LN2_LO = 1.90821492927058770002e-10lf;
const double X_PIO2 = 1.5707963267948966lf;
const double X_2_OVER_SQRTPI = 1.1283791670955126lf;
const double X_1_OVER_SQRTPI = 0.5641895835477563lf;

// e^r - 1 for |r| <= 0.35: r + r^2 (1/2! + r/3! + ... + r^12/14!); the next term is
// below 2^-58 r.
double x_expm1_small(double r) {
    double p = 1.1470745597729725e-11lf;  // 1/14!
    p = p * r + 1.6059043836821613e-10lf;
    p = p * r + 2.08767569878681e-09lf;
    p = p * r + 2.505210838544172e-08lf;
    p = p * r + 2.755731922398589e-07lf;
    p = p * r + 2.7557319223985893e-06lf;
    p = p * r + 2.48015873015873e-05lf;
    p = p * r + 1.984126984126984e-04lf;
    p = p * r + 1.388888888888889e-03lf;
    p = p * r + 8.333333333333333e-03lf;
    p = p * r + 4.1666666666666664e-02lf;
    p = p * r + 1.6666666666666666e-01lf;
    p = p * r + 0.5lf;  // 1/2!
    return r + (r * r) * p;
}

// 2^(j/32), j = 0..31, rounded to double: f32x_exp's table, in shared memory (indexed
// per element, a constant array would be a per-thread array on some drivers).
shared double x_exp2_table[32];

// Fills f32x_exp's table: every kernel that includes this file calls it at the start of
// main, in all its invocations (a workgroup of at least 32). Invocation j stores entry
// j; unrolled, the loop reads the constants by constant indices (indexed by the
// invocation, the array would first be copied to each invocation's memory).
void f32x_exp_init() {
    const double t[32] = double[](
        1.0lf, 1.0218971486541166lf, 1.0442737824274138lf, 1.0671404006768237lf,
        1.0905077326652577lf, 1.1143867425958924lf, 1.1387886347566916lf, 1.1637248587775775lf,
        1.189207115002721lf, 1.215247359980469lf, 1.241857812073484lf, 1.2690509571917332lf,
        1.2968395546510096lf, 1.3252366431597413lf, 1.3542555469368927lf, 1.383909881963832lf,
        1.4142135623730951lf, 1.4451808069770467lf, 1.4768261459394993lf, 1.5091644275934228lf,
        1.5422108254079407lf, 1.5759808451078865lf, 1.6104903319492543lf, 1.645755478153965lf,
        1.681792830507429lf, 1.718619298122478lf, 1.7562521603732995lf, 1.7947090750031072lf,
        1.8340080864093424lf, 1.8741676341103lf, 1.9152065613971474lf, 1.9571441241754002lf);
    uint lid = gl_LocalInvocationIndex;
    if (lid < 32u) {
        [[unroll]] for (uint j = 0u; j < 32u; j++) {
            if (lid == j) x_exp2_table[j] = t[j];
        }
    }
    barrier();
}

// e^x = 2^m 2^(j/32) e^r, with k = 32 m + j = round(x 32 / ln 2) and r = x - k ln2/32,
// |r| <= ln2/64: e^r = 1 + r + r^2 (1/2! + ... + r^4/6!) (the terms left out sum to
// under 2^-57), 2^(j/32) from the table, 2^m added to its exponent. For |x| <= 200;
// within about 2^-51 relative, in 11 double operations where the driver fuses the
// series' steps, 15 where it does not (a degree-12 series over |r| <= ln2/2 took 26 with
// f32x_exp's range checks: on the H200, whose f64 runs at half the f32 rate, a fused
// softmax's exact exps were its largest cost). tests/exp_double_model.rs models it.
double x_exp_core(double x) {
    // k by the 1.5 * 2^52 shift: k sits in the sum's low word, so neither a rounding
    // instruction nor a double-to-int conversion is needed; any rounding of the fma (or
    // of a driver's split of it) gives an integer k that keeps |r| within the series'
    // range. (dd_one: NVIDIA's compiler would fold (a + c) - c to a; see dd.glsl.)
    precise double shifted = fma(x, 46.16624130844683lf, 6755399441055744.0lf);  // 32 / ln 2
    precise double k = fma(shifted, dd_one, -6755399441055744.0lf);
    int ki = int(unpackDouble2x32(shifted).x);
    // ln2/32 in two parts: k * X_LN2_32_HI is exact for |k| < 2^21 (|k| < 2^14 here).
    const double X_LN2_32_HI = LN2_HI * 0.03125lf;
    const double X_LN2_32_LO = LN2_LO * 0.03125lf;
    precise double r = fma(-k, X_LN2_32_LO, fma(-k, X_LN2_32_HI, x));
    double q = 1.3888888888888889e-03lf;  // 1/6!
    q = q * r + 8.333333333333333e-03lf;
    q = q * r + 4.1666666666666664e-02lf;
    q = q * r + 1.6666666666666666e-01lf;
    q = q * r + 0.5lf;
    double s = fma(r * r, q, r);  // e^r - 1
    uvec2 t = unpackDouble2x32(x_exp2_table[ki & 31]);
    double scaled = packDouble2x32(uvec2(t.x, uint(int(t.y) + ((ki >> 5) << 20))));
    return fma(scaled, s, scaled);
}

double f32x_exp(double x) {
    if (!(abs(x) <= 100.0lf)) {
        if (isnan(x)) return x;
        if (x > 0.0lf) return f64_inf();  // beyond f32's range (e^88.73 overflows)
        if (x < -200.0lf) return 0.0lf;   // below half of f32's least subnormal
    }
    return x_exp_core(x);
}

// f32x_exp's f32 value for f32 x with |x| < 87 (a normal f32 result), without its range
// checks or a subnormal-safe conversion: a subnormal x may convert as zero, and e^x
// rounds to 1 either way.
float f32x_exp_normal(float x) {
    return float(x_exp_core(double(x)));
}

double f32x_expm1(double x) {
    if (isnan(x) || x == 0.0lf) return x;  // keeps -0
    if (abs(x) <= 0.35lf) return x_expm1_small(x);
    if (x < -40.0lf) return -1.0lf;
    return f32x_exp(x) - 1.0lf;  // e^x - 1 loses under 2 bits here
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: 2 atanh(s), s = f / (2 + f), as
// 2s (1 + s^2/3 + ... + s^20/21); s^2 <= 0.0295, so the next term is below 2^-56.
double x_log1p_small(double f) {
    double s = f / (2.0lf + f);
    double s2 = s * s;
    double q = 1.0lf / 21.0lf;
    q = q * s2 + 1.0lf / 19.0lf;
    q = q * s2 + 1.0lf / 17.0lf;
    q = q * s2 + 1.0lf / 15.0lf;
    q = q * s2 + 1.0lf / 13.0lf;
    q = q * s2 + 1.0lf / 11.0lf;
    q = q * s2 + 1.0lf / 9.0lf;
    q = q * s2 + 1.0lf / 7.0lf;
    q = q * s2 + 1.0lf / 5.0lf;
    q = q * s2 + 1.0lf / 3.0lf;
    return 2.0lf * s + (2.0lf * s) * s2 * q;
}

// log(x) for finite x > 0.
double x_log_positive(double x) {
    int e;
    double m = frexp(x, e);  // x = m 2^e, m in [0.5, 1)
    if (m < 0.7071067811865476lf) {
        m *= 2.0lf;
        e -= 1;
    }
    double de = double(e);
    return de * LN2_HI + (x_log1p_small(m - 1.0lf) + de * LN2_LO);
}

double f32x_log(double x) {
    if (isnan(x) || (isinf(x) && x > 0.0lf)) return x;
    if (x < 0.0lf) return f64_nan();
    if (x == 0.0lf) return -f64_inf();
    return x_log_positive(x);
}

double f32x_log1p(double x) {
    if (isnan(x) || x == 0.0lf || (isinf(x) && x > 0.0lf)) return x;
    if (x < -1.0lf) return f64_nan();
    if (x == -1.0lf) return -f64_inf();
    if (x > -0.2928932188134524lf && x < 0.41421356237309503lf) return x_log1p_small(x);
    return x_log_positive(1.0lf + x);  // 1 + x off by 2^-53 relative: log off by 2^-53
}

double f32x_sigmoid(double x) {
    if (isnan(x)) return x;
    if (x < -40.0lf) return f32x_exp(x);  // e^x / (1 + e^x) = e^x (1 - e^x), e^x < 2^-57
    return 1.0lf / (1.0lf + f32x_exp(-x));
}

double f32x_tanh(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 22.0lf) return f64_copysign(1.0lf, x);
    double e = f32x_expm1(-2.0lf * a);
    return f64_copysign(-e / (e + 2.0lf), x);
}

double f32x_sinh(double x) {
    if (isnan(x) || isinf(x) || x == 0.0lf) return x;
    double a = abs(x);
    double r;
    if (a < 1.0lf) {
        double e = f32x_expm1(a);
        r = 0.5lf * (e + e / (e + 1.0lf));
    } else {
        double e = f32x_exp(a);
        r = 0.5lf * (e - 1.0lf / e);
    }
    return f64_copysign(r, x);
}

double f32x_cosh(double x) {
    if (isnan(x)) return x;
    double e = f32x_exp(abs(x));
    return 0.5lf * (e + 1.0lf / e);
}

double f32x_asinh(double x) {
    if (isnan(x) || isinf(x) || abs(x) < 3.7252902984e-09lf) return x;  // below 2^-28
    double a = abs(x);
    double r;
    if (a > 268435456.0lf) {
        r = x_log_positive(a) + LN2_HI + LN2_LO;  // log(2a)
    } else {
        double t = a * a;  // exact for an f32 a
        r = f32x_log1p(a + t / (1.0lf + sqrt(1.0lf + t)));
    }
    return f64_copysign(r, x);
}

double f32x_acosh(double x) {
    if (isnan(x)) return x;
    if (x < 1.0lf) return f64_nan();
    if (isinf(x)) return x;
    if (x > 268435456.0lf) return x_log_positive(x) + LN2_HI + LN2_LO;
    double t = x - 1.0lf;  // exact for an f32 x
    return f32x_log1p(t + sqrt(t * (x + 1.0lf)));
}

double f32x_atanh(double x) {
    if (isnan(x) || abs(x) < 3.7252902984e-09lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    if (a == 1.0lf) return f64_copysign(f64_inf(), x);
    return f64_copysign(0.5lf * f32x_log1p(2.0lf * a / (1.0lf - a)), x);
}

// atan(a) for a >= 0 (a may be inf): pi/2 - atan(1/a) above 1, then three halvings
// t -> t / (1 + sqrt(1 + t^2)) to t <= tan(pi/32), then 8 (t - t^3/3 + ... + t^17/17).
double x_atan_positive(double a) {
    bool inv = a > 1.0lf;
    double t = inv ? 1.0lf / a : a;
    [[unroll]] for (int i = 0; i < 3; i++) t = t / (1.0lf + sqrt(1.0lf + t * t));
    double t2 = t * t;
    double q = 1.0lf / 17.0lf;
    q = -q * t2 + 1.0lf / 15.0lf;
    q = -q * t2 + 1.0lf / 13.0lf;
    q = -q * t2 + 1.0lf / 11.0lf;
    q = -q * t2 + 1.0lf / 9.0lf;
    q = -q * t2 + 1.0lf / 7.0lf;
    q = -q * t2 + 1.0lf / 5.0lf;
    q = -q * t2 + 1.0lf / 3.0lf;
    double r = 8.0lf * (t - t * t2 * q);
    return inv ? X_PIO2 - r : r;
}

double f32x_atan(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    return f64_copysign(x_atan_positive(abs(x)), x);
}

double f32x_asin(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    // (1 - a)(1 + a) is exact for an f32 a; at a = 1 the quotient is inf: pi/2.
    return f64_copysign(x_atan_positive(a / sqrt((1.0lf - a) * (1.0lf + a))), x);
}

double f32x_acos(double x) {
    if (isnan(x)) return x;
    if (abs(x) > 1.0lf) return f64_nan();
    return 2.0lf * x_atan_positive(sqrt((1.0lf - x) / (1.0lf + x)));
}

// Nx's rsqrt in double: 1 / sqrt(x), rounded once more to f32.
double f32x_rsqrt(double x) {
    // Zeros apart: lavapipe fuses 1 / sqrt(-0) into an rsqrt that gives NaN, not -inf.
    if (x == 0.0lf) return 1.0lf / x;
    return 1.0lf / sqrt(x);
}

double f32x_cbrt(double x) {
    if (x == 0.0lf || isnan(x) || isinf(x)) return x;
    double a = abs(x);
    // a = v * 2^(3q) with v in [1, 8): the cube root is cbrt(v) * 2^q.
    int e = dd_exponent(a);
    int q = e >= 0 ? e / 3 : -((2 - e) / 3);
    double v = a * dd_pow2(-3 * q);
    double y = double(pow(float(v), 1.0 / 3.0));  // ~2^-22
    [[unroll]] for (int i = 0; i < 2; i++) y -= (y * y * y - v) / (3.0lf * y * y);
    return f64_copysign(y * dd_pow2(q), x);
}

// erf(x) for |x| < 2: 2/sqrt(pi) e^(-x^2) sum_n 2^n x^(2n+1) / (1 3 5 ... (2n+1)), the
// series without cancellation (x^2 is exact for an f32 x).
double x_erf_series(double x) {
    double x2 = x * x;
    double t = x;
    double s = x;
    [[dont_unroll]] for (int n = 1; n < 200; n++) {
        t *= 2.0lf * x2 / double(2 * n + 1);
        s += t;
        if (abs(t) <= abs(s) * 1.0e-17lf) break;
    }
    return X_2_OVER_SQRTPI * s * f32x_exp(-x2);
}

// erfc(x) for x >= 1: e^(-x^2) / sqrt(pi) / (x + (1/2) / (x + (2/2) / (x + ...))),
// 200 terms below 1.5, 100 above (relative error below 2^-55 from x = 1 on).
double x_erfc_fraction(double x) {
    double f = x;
    int terms = x < 1.5lf ? 200 : 100;
    [[dont_unroll]] for (int n = terms; n >= 1; n--) f = x + 0.5lf * double(n) / f;
    return X_1_OVER_SQRTPI * f32x_exp(-x * x) / f;
}

double f32x_erf(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a >= 4.5lf) return f64_copysign(1.0lf, x);  // 1 - erf(4.5) = 2e-10 rounds away
    if (a < 2.0lf) return x_erf_series(x);
    return f64_copysign(1.0lf - x_erfc_fraction(a), x);
}

double f32x_erfc(double x) {
    if (isnan(x)) return x;
    if (x < -4.5lf) return 2.0lf;  // 2 - erfc(4.5) rounds to 2 (also for -inf)
    if (x <= -2.0lf) return 2.0lf - x_erfc_fraction(-x);
    // 1 - erf(x) below 1 (erf / erfc <= 5.4 there: under 3 bits lost), the fraction above.
    if (x < 1.0lf) return 1.0lf - x_erf_series(x);
    if (x > 10.5lf) return 0.0lf;  // erfc(10.5) ~ 7e-50 is below f32's subnormals
    return x_erfc_fraction(x);
}

// pow with C99 semantics (as f64_pow), the magnitude as exp(b log|a|) in double: for a
// finite f32 result |b log a| < 104, so the product is off by under 2^-46 absolute.
double f32x_pow(double a, double b) {
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
        r = f32x_exp(b * x_log_positive(m));
    }
    return (neg && odd) ? -r : r;
}
