// Double-double arithmetic for the f64 math functions (shaders/common/math64.glsl).
//
// GLSL has no f64 exp, log, sin or pow. We compute them in double-double, a value
// being hi + lo with |lo| <= ulp(hi) / 2 (about 106 bits), and round once at the end,
// so results are correctly rounded but for the rare arguments whose exact value lies
// within ~2^-70 relative of a rounding boundary. A normalised pair's hi already is the
// rounded value.
//
// Every intermediate is `precise` (SPIR-V NoContraction): the error-free
// transformations below break if a compiler fuses a * b + c or reassociates sums.

// 1.0, but unknown to the compiler: the kernel's main sets it from a push constant.
// NVIDIA's driver simplifies b - ((a + b) - a) to 0 although SPIR-V's NoContraction
// forbids reassociating; multiplying the intermediate by dd_one blocks that (exactly).
double dd_one = 1.0lf;

dvec2 dd_two_sum(double a, double b) {
    precise double s = a + b;
    precise double v = (s - a) * dd_one;
    precise double e = (a - (s - v)) + (b - v);
    return dvec2(s, e);
}

// Requires |a| >= |b| (or a == 0).
dvec2 dd_quick_sum(double a, double b) {
    precise double s = a + b;
    precise double e = b - (s - a) * dd_one;
    return dvec2(s, e);
}

// Dekker's exact product by Veltkamp splitting, not fma(a, b, -p): SPIR-V's Fma need not
// round once (lavapipe computes f64 fma as a multiply and an add). The split multiplies
// by 2^27 + 1, so values above 2^996 are split at 2^-28 of their size and scaled back.
dvec2 dd_split(double a) {
    double scale = abs(a) > 6.696928794914171e299lf ? 268435456.0lf : 1.0lf;
    precise double b = a / scale;
    precise double c = 134217729.0lf * b;
    precise double hi = c - (c - b) * dd_one;
    precise double lo = b - hi;
    return dvec2(hi, lo) * scale;
}

dvec2 dd_two_prod(double a, double b) {
    precise double p = a * b;
    dvec2 x = dd_split(a);
    dvec2 y = dd_split(b);
    precise double e = ((x.x * y.x - p) + x.x * y.y + x.y * y.x) + x.y * y.y;
    return dvec2(p, e);
}

dvec2 dd_add(dvec2 a, dvec2 b) {
    dvec2 s = dd_two_sum(a.x, b.x);
    dvec2 t = dd_two_sum(a.y, b.y);
    precise double lo = s.y + t.x;
    s = dd_quick_sum(s.x, lo);
    precise double lo2 = s.y + t.y;
    return dd_quick_sum(s.x, lo2);
}

dvec2 dd_sub(dvec2 a, dvec2 b) {
    return dd_add(a, -b);
}

dvec2 dd_add_d(dvec2 a, double b) {
    dvec2 s = dd_two_sum(a.x, b);
    precise double lo = s.y + a.y;
    return dd_quick_sum(s.x, lo);
}

dvec2 dd_mul(dvec2 a, dvec2 b) {
    dvec2 p = dd_two_prod(a.x, b.x);
    precise double cross = a.x * b.y + a.y * b.x;
    precise double lo = p.y + cross;
    return dd_quick_sum(p.x, lo);
}

dvec2 dd_mul_d(dvec2 a, double b) {
    dvec2 p = dd_two_prod(a.x, b);
    precise double lo = p.y + a.y * b;
    return dd_quick_sum(p.x, lo);
}

// Long division: three quotient digits, each from the remainder of the previous.
dvec2 dd_div(dvec2 a, dvec2 b) {
    precise double q1 = a.x / b.x;
    dvec2 r = dd_sub(a, dd_mul_d(b, q1));
    precise double q2 = r.x / b.x;
    r = dd_sub(r, dd_mul_d(b, q2));
    precise double q3 = r.x / b.x;
    return dd_add_d(dd_quick_sum(q1, q2), q3);
}

dvec2 dd_div_d(dvec2 a, double b) {
    return dd_div(a, dvec2(b, 0.0lf));
}

// One Newton correction of the double square root (Karp and Markstein).
dvec2 dd_sqrt(dvec2 a) {
    if (!(a.x > 0.0lf)) return dvec2(sqrt(a.x), 0.0lf);  // 0, or NaN below 0
    precise double y = sqrt(a.x);
    dvec2 r = dd_sub(a, dd_two_prod(y, y));
    precise double c = r.x / (2.0lf * y);
    return dd_quick_sum(y, c);
}

// 2^k as a double, for -1022 <= k <= 1023.
double dd_pow2(int k) {
    return packDouble2x32(uvec2(0u, uint(k + 1023) << 20));
}

// The double nearest to v * 2^k, for any k: overflow gives inf, underflow a subnormal
// (rounded twice there: at most one subnormal ulp off).
double dd_scale(dvec2 v, int k) {
    if (k > 1023) return (v.x * dd_pow2(1023)) * dd_pow2(min(k - 1023, 1023));
    if (k < -1222) return v.x * 0.0lf;
    if (k < -1022) return (v.x * dd_pow2(k + 200)) * dd_pow2(-200);
    return v.x * dd_pow2(k);
}

// Exponent of a normal or subnormal double x != 0: x = m * 2^e with 1 <= m < 2.
int dd_exponent(double x) {
    double a = abs(x);
    int adj = 0;
    if (a < 2.2250738585072014e-308lf) {
        a *= 18014398509481984.0lf;  // 2^54
        adj = -54;
    }
    return int((unpackDouble2x32(a).y >> 20) & 0x7FFu) - 1023 + adj;
}

// v * 2^-e for a double-double v and any e with a normal result.
dvec2 dd_scale_down(dvec2 v, int e) {
    int h = e / 2;
    return v * dd_pow2(-h) * dd_pow2(-(e - h));
}
