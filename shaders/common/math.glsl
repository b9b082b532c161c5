// Float helpers with better accuracy than the GLSL built-ins they replace (those are only
// required to be accurate to a few ulps and can overflow in intermediate steps).
#if defined(CT_F32)
// expm1 and log1p must stay accurate for tiny |x|, and the classic exp/log correction
// tricks cannot deliver that: Vulkan lets log be 2^-21 off (absolute) on [0.5, 2].
// Below 0.5 (expm1) and on [-0.5, 1] (log1p) they use series instead.
float nxv_expm1(float x) {
    if (abs(x) < 0.5) {
        if (x == 0.0) return x;  // keeps -0
        // x + x^2 (1/2! + x/3! + ... + x^7/9!): the next term is below 2^-28 x.
        float p = 1.0 / 362880.0;
        p = p * x + 1.0 / 40320.0;
        p = p * x + 1.0 / 5040.0;
        p = p * x + 1.0 / 720.0;
        p = p * x + 1.0 / 120.0;
        p = p * x + 1.0 / 24.0;
        p = p * x + 1.0 / 6.0;
        p = p * x + 0.5;
        return x + x * x * p;
    }
    float u = exp(x);
    if (isinf(u)) return u;
    return u - 1.0;
}

float nxv_log1p(float x) {
    if (x >= -0.5 && x <= 1.0) {
        // log1p(x) = 2 atanh(s), s = x / (2 + x) in [-1/3, 1/3]: 2 (s + s^3/3 + ... + s^19/19).
        float s = x / (2.0 + x);
        float s2 = s * s;
        float p = 1.0 / 19.0;
        p = p * s2 + 1.0 / 17.0;
        p = p * s2 + 1.0 / 15.0;
        p = p * s2 + 1.0 / 13.0;
        p = p * s2 + 1.0 / 11.0;
        p = p * s2 + 1.0 / 9.0;
        p = p * s2 + 1.0 / 7.0;
        p = p * s2 + 1.0 / 5.0;
        p = p * s2 + 1.0 / 3.0;
        return 2.0 * (s + s * s2 * p);
    }
    float u = 1.0 + x;
    // Below -0.5, 1 + x is exact (and -inf, NaN fall through to log's NaN).
    if (!(x > 1.0) || isinf(u)) return log(u);
    return log(u) + (x - (u - 1.0)) / u;  // corrects the rounding of 1 + x
}

float nxv_tanh(float x) {
    float a = abs(x);
    if (a > 9.0) return sign(x);
    float e = nxv_expm1(-2.0 * a);
    float r = -e / (2.0 + e);
    return x < 0.0 ? -r : r;
}

float nxv_sinh(float x) {
    float a = abs(x);
    if (a < 1.0) {
        float e = nxv_expm1(a);
        float r = 0.5 * (e + e / (e + 1.0));
        return x < 0.0 ? -r : r;
    }
    float e = exp(a - 0.6931471805599453);  // exp(a)/2 without early overflow
    float r = e - 0.25 / e;
    return x < 0.0 ? -r : r;
}

float nxv_cosh(float x) {
    float e = exp(abs(x) - 0.6931471805599453);
    return e + 0.25 / e;
}

float nxv_asinh(float x) {
    float a = abs(x);
    float r = (a > 1.0e10) ? log(a) + 0.6931471805599453
                           : nxv_log1p(a + a * a / (1.0 + sqrt(1.0 + a * a)));
    return x < 0.0 ? -r : r;
}

float nxv_acosh(float x) {
    if (x > 1.0e10) return log(x) + 0.6931471805599453;
    float t = x - 1.0;  // exact near 1, where log(x + ...) would lose the result
    return nxv_log1p(t + sqrt(t) * sqrt(x + 1.0));
}

float nxv_atanh(float x) {
    return 0.5 * nxv_log1p(2.0 * x / (1.0 - x));
}

float nxv_cbrt(float x) {
    if (x == 0.0 || isinf(x) || isnan(x)) return x;
    float a = abs(x);
    float y = pow(a, 1.0 / 3.0);
    y = y - (y * y * y - a) / (3.0 * y * y);  // one Newton step: exact on perfect cubes
    return x < 0.0 ? -y : y;
}

// atan on f32 (Cephes atanf: range reduction to |x| <= tan(pi/8), then a minimax
// polynomial; ~1 ulp). Drivers' atan may be far less accurate (lavapipe: ~2e-5).
float nxv_atan(float x) {
    if (isnan(x)) return x;
    float a = abs(x);
    float y = 0.0;
    if (a > 2.414213562373095) {
        y = 1.5707963267948966;
        a = -1.0 / a;
    } else if (a > 0.4142135623730950) {
        y = 0.7853981633974483;
        a = (a - 1.0) / (a + 1.0);
    }
    float z = a * a;
    y += (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z - 3.33329491539e-1) * z * a + a;
    return x < 0.0 ? -y : y;
}

// asin and acos through atan (the drivers' are not required to be accurate).
float nxv_asin(float x) {
    if (abs(x) > 1.0) return 0.0 / 0.0;
    float c = sqrt((1.0 - x) * (1.0 + x));
    if (abs(x) <= c) return nxv_atan(x / c);
    float r = 1.5707963267948966 - nxv_atan(c / abs(x));
    return x < 0.0 ? -r : r;
}

float nxv_acos(float x) {
    if (abs(x) > 1.0) return 0.0 / 0.0;
    return 1.5707963267948966 - nxv_asin(x);
}

// erf: rational approximation on [-4, 4] (the form used by Eigen and XLA for f32).
float nxv_erf(float x) {
    if (isnan(x)) return x;  // clamp would turn NaN into a bound
    float c = clamp(x, -4.0, 4.0);
    float x2 = c * c;
    float p = -2.72614225801306e-10;
    p = p * x2 + 2.77068142495902e-08;
    p = p * x2 - 2.10102402082508e-06;
    p = p * x2 - 5.69250639462346e-05;
    p = p * x2 - 7.34990630326855e-04;
    p = p * x2 - 2.95459980854025e-03;
    p = p * x2 - 1.60960333262415e-02;
    float q = -1.45660718464996e-05;
    q = q * x2 - 2.13374055278905e-04;
    q = q * x2 - 1.68282697438203e-03;
    q = q * x2 - 7.37332916720468e-03;
    q = q * x2 - 1.42647390514189e-02;
    return c * p / q;
}

// erfc: 1 - erf near zero, and exp(-x^2) times a rational fit in 1/x^2 for the tails
// (Numerical Recipes' erfcc, relative error < 1.2e-7), where 1 - erf would cancel.
float nxv_erfc(float x) {
    if (abs(x) < 0.5) return 1.0 - nxv_erf(x);
    float z = abs(x);
    float t = 1.0 / (1.0 + 0.5 * z);
    float r = t * exp(-z * z - 1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 +
              t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 +
              t * (-0.82215223 + t * 0.17087277)))))))));
    return x >= 0.0 ? r : 2.0 - r;
}

// erf_inv: Giles, "Approximating the erfinv function" (GPU Computing Gems), single precision.
float nxv_erf_inv(float x) {
    if (x <= -1.0) return x == -1.0 ? -1.0 / 0.0 : 0.0 / 0.0;
    if (x >= 1.0) return x == 1.0 ? 1.0 / 0.0 : 0.0 / 0.0;
    float w = -log((1.0 - x) * (1.0 + x));
    float p;
    if (w < 5.0) {
        w = w - 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    return p * x;
}

// pow with Nx (C99) semantics for a negative base, integral and infinite exponents.
float nxv_pow(float a, float b) {
    if (b == 0.0) return 1.0;
    if (a == 1.0) return 1.0;
    if (isnan(a) || isnan(b)) return a + b;
    if (isinf(b)) {
        float m = abs(a);
        if (m == 1.0) return 1.0;
        return ((m > 1.0) == (b > 0.0)) ? 1.0 / 0.0 : 0.0;
    }
    float r = pow(abs(a), b);
    if (a < 0.0) {
        // A finite negative base needs an integral exponent; -inf takes any (C99).
        if (floor(b) != b) return isinf(a) ? r : 0.0 / 0.0;
        if (mod(abs(b), 2.0) == 1.0) r = -r;
    }
    if (a == 0.0 && b < 0.0) return (mod(abs(b), 2.0) == 1.0 && (floatBitsToUint(a) >> 31) == 1u) ? -1.0 / 0.0 : 1.0 / 0.0;
    return r;
}

// atan2 with C99 special cases: GLSL leaves atan(0, 0) undefined (lavapipe answers
// +-3pi/4) and need not propagate NaN.
float nxv_atan2(float y, float x) {
    if (isnan(x) || isnan(y)) return x + y;
    if (y == 0.0) {
        bool neg_x = x < 0.0 || (x == 0.0 && (floatBitsToUint(x) >> 31) == 1u);
        if (!neg_x) return y;  // +-0
        return (floatBitsToUint(y) >> 31) == 1u ? -3.14159265358979 : 3.14159265358979;
    }
    float ax = abs(x);
    float ay = abs(y);
    float r;
    if (isinf(ax) && isinf(ay)) r = x > 0.0 ? 0.7853981633974483 : 2.356194490192345;
    else if (x == 0.0) r = 1.5707963267948966;
    else {
        float t = nxv_atan(ay / ax);
        r = x > 0.0 ? t : 3.141592653589793 - t;
    }
    return (floatBitsToUint(y) >> 31) == 1u ? -r : r;
}
#endif

#if defined(CT_F32) && defined(EXACT_VIA_F64)
// f32 arithmetic that keeps subnormals on drivers that flush them (NVIDIA's flushes f32
// subnormals in f32 instructions and reports no shaderDenormPreserveFloat32). An op whose
// operands or result have a zero exponent field (zero or subnormal: where flushing could
// have changed something) is redone in double through the bits. + - * / and sqrt in
// double, rounded once to f32, are correctly rounded: 53 >= 2 * 24 + 2 bits, so the
// double rounding is innocuous (also in the subnormal range, where both lose the same
// bits). Elsewhere the f32 instruction's result stands: these cost a few integer tests.
bool f32_zero_exponent(float x) {
    return (floatBitsToUint(x) & 0x7F800000u) == 0u;
}

// Nonzero and subnormal.
bool f32_subnormal(float x) {
    return (floatBitsToUint(x) & 0x7FFFFFFFu) - 1u < 0x007FFFFFu;
}

// Whether an f32 op on a and b with result r may have met a flushed subnormal.
bool f32_may_flush(float r, float a, float b) {
    return f32_zero_exponent(r) || f32_zero_exponent(a) || f32_zero_exponent(b);
}

// The exact paths are branches the compiler must not flatten into selects: flattened,
// every element paid for both (the fused softmax ran 35% slower).
float f32s_add(float a, float b) {
    float r = a + b;
    [[dont_flatten]] if (f32_may_flush(r, a, b)) r = f32_narrow(f32_widen(a) + f32_widen(b));
    return r;
}

float f32s_sub(float a, float b) {
    float r = a - b;
    [[dont_flatten]] if (f32_may_flush(r, a, b)) r = f32_narrow(f32_widen(a) - f32_widen(b));
    return r;
}

float f32s_mul(float a, float b) {
    float r = a * b;
    [[dont_flatten]] if (f32_may_flush(r, a, b)) r = f32_narrow(f32_widen(a) * f32_widen(b));
    return r;
}

// a < b and a == b with subnormal operands compared as themselves, not as zeros: the
// ordered compares of types.glsl (through the bits), false where either is NaN as the
// plain operators are.
bool f32s_less(float a, float b) {
    return !isnan(a) && !isnan(b) && T_LESS(a, b);
}

bool f32s_equal(float a, float b) {
    return !isnan(a) && !isnan(b) && T_EQUAL(a, b);
}

float f32s_negate(float x) {
    return uintBitsToFloat(floatBitsToUint(x) ^ 0x80000000u);
}

float f32s_abs(float x) {
    return uintBitsToFloat(floatBitsToUint(x) & 0x7FFFFFFFu);
}
#endif

#if defined(IS_FLOAT)
// fmod (Nx.remainder on floats), exact: shift-and-subtract long division. Each step
// subtracts s = |b| * 2^k from r with s <= r < 2s, which floating point does exactly;
// a - b * trunc(a / b) is not exact (1.0 % 0.1 gave 0 instead of 0.09999999).
T nxv_fmod(T a, T b) {
    if (isnan(a) || isnan(b)) return a + b;
    if (isinf(a) || b == T(0)) return T(0.0) / T(0.0);
    T m = abs(b);
    T r = abs(a);
    if (!(r >= m)) return a;  // also |b| = inf
    T s = m;
    while (s * T(2) <= r) s *= T(2);
    for (;;) {
        if (r >= s) r -= s;
        if (s == m) break;
        s *= T(0.5);
    }
    return a < T(0) ? -r : r;
}

// Correctly rounded division and square root. Vulkan lets drivers compute x / y within
// 2.5 ulp and sqrt within 3 ulp (NVIDIA's results differ from IEEE in the last bit); one
// fused multiply-add correction step restores the correctly rounded result that Nx
// (and lavapipe) give. Special cases (0, inf, NaN, huge/tiny operands) keep the plain
// result.
T nxv_div(T a, T b) {
#if defined(EXACT_VIA_F64)
    // f64 division, rounded once to f32: correctly rounded but for double-rounding cases
    // (the exact quotient within ~2^-50 of an f32 midpoint). Operands or quotient zero
    // or subnormal: again through the bits (see f32s_add). The common path stays the plain conversions: widening every operand through the bits
    // made the divide kernel 35% slower on the H200.
    float quotient = float(double(a) / double(b));
    [[dont_flatten]] if (f32_may_flush(quotient, a, b)) {
        quotient = f32_narrow(f32_widen(a) / f32_widen(b));
    }
    return quotient;
#elif defined(CT_F64)
    return a / b;
#endif
    T q = a / b;
    if (q == T(0) || isinf(q) || isnan(q) || isinf(b) || abs(b) < T(1.0e-30) || abs(b) > T(1.0e30)) return q;
    // `precise` makes fma() one fused operation (GLSL may otherwise split it).
    precise T r = fma(-q, b, a);
    precise T c = fma(r, T(1) / b, q);
    return c;
}

T nxv_sqrt(T x) {
#if defined(EXACT_VIA_F64)
    return f32_subnormal(x) ? f32_narrow(sqrt(f32_widen(x))) : float(sqrt(double(x)));
#elif defined(CT_F64)
    return sqrt(x);
#endif
    T s = sqrt(x);
    if (!(x > T(0)) || isinf(x) || s == T(0)) return s;
    precise T r = fma(-s, s, x);
    precise T c = fma(r, T(0.5) / s, s);
    return c;
}

#if defined(CT_F64)
// trunc of a double by arithmetic: Mesa 22.3's lavapipe returns the argument of a double
// trunc (and roundEven) unchanged from 2^24 up. Below 2^52, adding and removing 2^52
// rounds |x| to an integer; one less where that rounded up.
double nxv_trunc(double x) {
    precise double a = abs(x);
    if (!(a < 4503599627370496.0lf)) return x;  // integral already, or NaN or infinite
    precise double r = (a + 4503599627370496.0lf) - 4503599627370496.0lf;
    if (r > a) r -= 1.0lf;
    return x < 0.0lf ? -r : r;
}
#else
#define nxv_trunc trunc
#endif

// Round half away from zero (Nx.round), exact for every float.
T nxv_round(T x) {
    T t = nxv_trunc(x);
    if (abs(x - t) >= T(0.5)) t += sign(x);
    // A zero result is +0, as Nx.BinaryBackend's (it rounds through an integer:
    // round(-0.3) is 0.0, where IEEE's roundf gives -0.0). abs, not a -0.0 literal.
    return t == T(0) ? abs(t) : t;
}
#endif
