// Transcendental functions of complex numbers, for complex.comp built with COMPLEX_MATH.
// Each follows the `complex` library (0.6) that Nx.BinaryBackend calls, formula for
// formula and in the same order of operations, so the results are Nx's: its special-value
// clauses are reproduced, and the rest is IEEE arithmetic, which is what the library's
// rules for infinities and NaN amount to (signs of zero aside).
//
// The real functions underneath: with CT_F64 the f64 library (math64*.glsl, correctly
// rounded, where Nx calls glibc through :math); with CT_F32 (devices without f64) the
// f32 functions of math.glsl.
#if defined(CT_F64)
#define R_EXP f64_exp
#define R_LOG f64_log
#define R_SIN f64_sin
#define R_COS f64_cos
#define R_SINH f64_sinh
#define R_COSH f64_cosh
#define R_ATAN2 f64_atan2
#define R_POW f64_pow
#define R_PI DD_PI.x
#else
#define R_EXP exp
#define R_LOG log
#define R_SIN sin
#define R_COS cos
#define R_SINH nxv_sinh
#define R_COSH nxv_cosh
#define R_ATAN2 nxv_atan2
#define R_POW nxv_pow
#define R_PI 3.14159265358979323846
#endif

T c_inf() { return T(1) / T(0); }
T c_nan() { return c_inf() - c_inf(); }
CV c_nan2() { return CV(c_nan(), c_nan()); }
bool c_finite(T x) { return !isnan(x) && !isinf(x); }
bool c_all_finite(CV z) { return c_finite(z.x) && c_finite(z.y); }

// IEEE 0 * x: NaN for infinities and NaN, else a zero of x's sign. The library's
// products with the constant parts of i, 1/2 or a real operand go through this, because
// compilers fold 0 * x into 0 (Vulkan does not promise IEEE infinities, NaN or signed
// zeros), which would turn the library's NaN at a singularity into a number.
T mz(T x) {
    if (!c_finite(x)) return c_nan();
    return signed_zero(sign_bit(x));
}

// The library's products and quotients with a constant operand, written out in IEEE
// arithmetic: i z, (-i) z (the -0 - 1i of Complex.negate(i)), (k + 0i) z for a real k,
// (0.5 i) z, z / (2 + 0i), and (1 + 0i) / z.
CV cmul_i(CV z) { return CV(mz(z.x) - z.y, z.x + mz(z.y)); }
CV cmul_minus_i(CV z) { return CV(z.y - mz(z.x), -z.x - mz(z.y)); }
CV cmul_real(T k, CV z) { return CV(k * z.x - mz(z.y), mz(z.x) + k * z.y); }
CV cmul_half_i(CV z) { return CV(mz(z.x) - T(0.5) * z.y, T(0.5) * z.x + mz(z.y)); }
CV c_half(CV z) { return CV((z.x * T(2) + mz(z.y)) / T(4), (z.y * T(2) - mz(z.x)) / T(4)); }

CV c_recip(CV z) {
    if (isinf(z.x) && z.y == T(0)) return CV(T(0));
    precise T den = z.x * z.x + z.y * z.y;
    return CV((z.x + mz(z.y)) / den, (mz(z.x) - z.y) / den);
}

// z + r and r - z for a real r, as the library computes them (r is complex with an
// imaginary +0): the imaginary part of z + 0 and 0 - z is +0 for either zero, which is
// spelled out because compilers may fold y + 0 into y (Vulkan does not promise signed
// zeros).
CV c_add_real(CV z, T r) { return CV(z.x + r, z.y == T(0) ? T(0) : z.y); }
CV c_real_sub(T r, CV z) { return CV(r - z.x, z.y == T(0) ? T(0) : -z.y); }

// Complex.divide for two complex values: the textbook quotient, except that a finite
// value over a real infinity is 0.
CV c_div(CV a, CV b) {
    if (c_all_finite(a) && isinf(b.x) && b.y == T(0)) return CV(T(0));
    return cdiv(a, b);
}

// Complex.log of a real magnitude r >= 0 (or NaN): -inf at 0.
T c_log_real(T r) { return r == T(0) ? -c_inf() : R_LOG(r); }

// Complex.atan2(b, a) of two reals, with the library's clauses for infinities (which
// differ from C's: a finite b over -inf gives +pi whatever b's sign).
T c_atan2(T b, T a) {
    if (c_finite(a) && c_finite(b)) return R_ATAN2(b, a);
    if (isnan(a) || isnan(b)) return c_nan();
    if (isinf(b)) {
        T s = b > T(0) ? T(1) : T(-1);
        if (isinf(a)) return a > T(0) ? s * (R_PI / T(4)) : s * (T(3) * R_PI) / T(4);
        return s * (R_PI / T(2));
    }
    return a > T(0) ? T(0) : R_PI;  // b finite, a infinite
}

// Complex.phase.
T c_phase(CV z) {
    if (isnan(z.x) && c_finite(z.y)) return c_nan();
    if (isinf(z.x) && c_finite(z.y)) return z.x > T(0) ? T(0) : R_PI;
    if (isinf(z.x) && isinf(z.y)) {
        if (z.x > T(0)) return z.y > T(0) ? R_PI / T(4) : -R_PI / T(4);
        return z.y > T(0) ? T(3) * R_PI / T(4) : T(5) * R_PI / T(4);
    }
    if (isinf(z.x)) return c_nan();
    if (isinf(z.y)) return z.y > T(0) ? R_PI / T(2) : -R_PI / T(2);
    if (isnan(z.y)) return c_nan();
    return c_atan2(z.y, z.x);
}

// Complex.exp.
CV c_exp(CV z) {
    if (isinf(z.x) && z.x < T(0)) return CV(T(0));
    if (isinf(z.x) && isnan(z.y)) return CV(z.x, z.y);
    if (isinf(z.x) && !isinf(z.y)) return CV(z.x, z.x * z.y);
    if (!c_all_finite(z)) return c_nan2();
    T rho = R_EXP(z.x);
    return CV(rho * R_COS(z.y), rho * R_SIN(z.y));
}

// Complex.log: log |z| + i atan2(im, re).
CV c_log(CV z) { return CV(c_log_real(cabs(z)), c_atan2(z.y, z.x)); }

// Complex.sin and Complex.cos.
CV c_sin(CV z) {
    if (!c_finite(z.x) || isnan(z.y)) return c_nan2();
    if (isinf(z.y)) return CV(z.x * z.y, z.y);
    return CV(R_SIN(z.x) * R_COSH(z.y), R_COS(z.x) * R_SINH(z.y));
}

CV c_cos(CV z) {
    if (!c_finite(z.x) || isnan(z.y)) return c_nan2();
    if (isinf(z.y)) return CV(c_inf(), -z.y * z.x);
    return CV(R_COS(z.x) * R_COSH(z.y), -R_SIN(z.x) * R_SINH(z.y));
}

// Complex.sinh, cosh and tanh, through exp.
CV c_sinh(CV z) { return c_half(c_exp(z) - c_exp(-z)); }
CV c_cosh(CV z) { return c_half(c_exp(z) + c_exp(-z)); }

// Complex.asin, acos and atan (i = 0 + 1i; -i is -0 - 1i as Complex.negate makes it).
CV c_asin(CV z) {
    if (!c_all_finite(z)) return c_nan2();
    CV t2 = c_real_sub(T(1), cmul(z, z));
    return cmul_minus_i(c_log(cmul_i(z) + csqrt(t2)));
}

CV c_acos(CV z) {
    if (!c_all_finite(z)) return c_nan2();
    CV t1 = cmul(z, z) - CV(T(1), T(0));
    return cmul_minus_i(c_log(z + csqrt(t1)));
}

CV c_atan(CV z) {
    CV iz = cmul_i(z);
    CV t2 = c_real_sub(T(1), iz);
    CV t3 = c_add_real(iz, T(1));
    return cmul_half_i(c_log(t2) - c_log(t3));  // (0.5 + 0i) i = 0 + 0.5i
}

// Complex.asinh, acosh and atanh.
CV c_asinh(CV z) { return c_log(z + csqrt(c_add_real(cmul(z, z), T(1)))); }
CV c_acosh(CV z) { return c_log(z + csqrt(cmul(z, z) - CV(T(1), T(0)))); }

CV c_atanh(CV z) {
    CV t3 = c_div(c_add_real(z, T(1)), c_real_sub(T(1), z));
    return cmul_real(T(0.5), c_log(t3));
}

// Complex.from_polar(r, phi) with the library's cases for an infinite r along an axis.
CV c_from_polar(T r, T phi) {
    if (phi == T(0)) return CV(r, T(0));
    T s = R_SIN(phi);
    T c = R_COS(phi);
    if (isinf(r)) {
        // @sin_pi and @cos_pi_on_2: :math.sin(:math.pi) and :math.cos(:math.pi / 2).
        T sin_pi = T(1.2246467991473532e-16);
        T cos_pi_on_2 = T(6.123233995736766e-17);
        if (s == sin_pi) return CV(r * c, T(0));
        if (c == cos_pi_on_2 || c == -cos_pi_on_2) return CV(T(0), r * s);
    }
    return cmul_real(r, CV(c, s));
}

// Complex.cbrt: the real cube root (pow(r, 1/3)) of |z| at a third of the phase.
CV c_cbrt(CV z) {
    T r = cabs(z);
    T root = isinf(r) || isnan(r) ? r : R_POW(r, T(1) / T(3));
    return c_from_polar(root, c_phase(z) / T(3));
}

// Complex.pow(x, y) of two complex values.
CV c_pow(CV x, CV y) {
    bool x_zero = x.x == T(0) && x.y == T(0);
    if (x_zero && isinf(y.x) && y.x > T(0) && y.y == T(0)) return CV(T(0));
    if (!c_all_finite(x) || !c_all_finite(y)) return c_nan2();
    if (x_zero) return y.x == T(0) && y.y == T(0) ? CV(T(1), T(0)) : CV(T(0));
    if (y.x == T(1) && y.y == T(0)) return x;
    if (y.x == T(-1) && y.y == T(0)) return c_recip(x);
    T rho = cabs(x);
    T theta = c_phase(x);
    T s = R_POW(rho, y.x) * R_EXP(-y.y * theta);
    T r = y.x * theta + y.y * c_log_real(rho);
    return CV(s * R_COS(r), s * R_SIN(r));
}

// The Nx unary ops on complex values (op codes of `UnaryOp`), as Nx.Shared defines them
// from the library's functions.
CV complex_math_unary(uint op, CV z) {
    switch (op) {
    case U_EXP: return c_exp(z);
    case U_EXPM1: return c_exp(z) - CV(T(1), T(0));
    case U_LOG: return c_log(z);
    case U_LOG1P: return c_log(c_add_real(z, T(1)));
    case U_SIGMOID: return c_recip(c_add_real(c_exp(-z), T(1)));
    case U_SIN: return c_sin(z);
    case U_COS: return c_cos(z);
    case U_TAN: return c_div(c_sin(z), c_cos(z));
    case U_SINH: return c_sinh(z);
    case U_COSH: return c_cosh(z);
    case U_TANH: return c_div(c_sinh(z), c_cosh(z));
    case U_ASIN: return c_asin(z);
    case U_ACOS: return c_acos(z);
    case U_ATAN: return c_atan(z);
    case U_ASINH: return c_asinh(z);
    case U_ACOSH: return c_acosh(z);
    case U_ATANH: return c_atanh(z);
    case U_RSQRT: return c_recip(csqrt(z));
    case U_CBRT: return c_cbrt(z);
    }
    return z;
}
