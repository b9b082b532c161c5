// f64 trigonometric functions and their inverses, in double-double (see math64.glsl).
// The argument reduction is exact enough for every double: three-part pi/2 below 2^28,
// Payne-Hanek (multiplying by 256 bits of 2/pi) above.

// x * 2/pi mod 4 for |x| >= 2^28 as a quadrant and r = x - q pi/2, |r| <= pi/4.
// x = M * 2^E (M a 53-bit integer); words of 2/pi whose product with M is a multiple of
// 4 are skipped, the next 8 words multiply M exactly (320-bit product), and the bits
// below the binary point become the fraction.
int reduce_payne_hanek(double x, out dvec2 r) {
    uvec2 w = unpackDouble2x32(x);
    int e = int((w.y >> 20) & 0x7FFu) - 1075;
    uint m_lo = w.x;
    uint m_hi = (w.y & 0xFFFFFu) | 0x100000u;
    int j0 = e < 34 ? 0 : (e - 34) / 32 + 1;
    // p = M * W, W = words j0 .. j0+7 as a 256-bit integer; p[0] is the lowest limb.
    uint p[10];
    [[dont_unroll]] for (int i = 0; i < 10; i++) p[i] = 0u;
    [[dont_unroll]] for (int i = 0; i < 8; i++) {
        uint word = TWO_OVER_PI[j0 + 7 - i];
        uint carry = 0u;
        [[dont_unroll]] for (int h = 0; h < 2; h++) {
            uint hi, lo;
            umulExtended(word, h == 0 ? m_lo : m_hi, hi, lo);
            uint c1, c2;
            uint s = uaddCarry(p[i + h], lo, c1);
            s = uaddCarry(s, carry, c2);
            p[i + h] = s;
            carry = hi + c1 + c2;
        }
        [[dont_unroll]] for (int t = i + 2; t < 10 && carry != 0u; t++) {
            uint c;
            p[t] = uaddCarry(p[t], carry, c);
            carry = c;
        }
    }
    // The binary point sits s bits up: s = 32 (j0 + 8) - e, between 222 and 281.
    int s = 32 * (j0 + 8) - e;
    int q = int((p[s / 32] >> (s % 32)) & 1u);
    int b1 = s + 1;
    q |= int((p[b1 / 32] >> (b1 % 32)) & 1u) << 1;
    // Five 32-bit chunks below the point: f = sum chunk_t 2^(-32 t).
    dvec2 f = dvec2(0.0lf);
    [[dont_unroll]] for (int t = 5; t >= 1; t--) {
        int lo_bit = s - 32 * t;
        int li = lo_bit / 32;
        int sh = lo_bit % 32;
        uint chunk = p[li] >> sh;
        if (sh != 0) chunk |= p[li + 1] << (32 - sh);
        f = dd_add_d(f, double(chunk) * dd_pow2(-32 * t));
    }
    if (f.x >= 0.5lf) {
        f = dd_add_d(f, -1.0lf);
        q += 1;
    }
    r = dd_mul(f, DD_PIO2);
    return q & 3;
}

// roundEven of a non-negative double below 2^52 by adding and removing 2^52 (the add
// rounds to an integer, to even): Mesa 22.3's lavapipe returns roundEven's and trunc's
// double argument unchanged from 2^24 up (sin(1e8) came out 1.0).
double f64_round_even(double a) {
    precise double r = (a + 4503599627370496.0lf) - 4503599627370496.0lf;
    return r;
}

// Quadrant q and r = x - q pi/2 (|r| <= pi/4 roughly) for finite x.
int reduce_pio2(double x, out dvec2 r) {
    double a = abs(x);
    int q;
    if (a <= 0.7853981633974483lf) {
        r = dvec2(a, 0.0lf);
        q = 0;
    } else if (a < 268435456.0lf) {
        double k = f64_round_even(a * TWO_OVER_PI_D);
        r = dd_sub(dvec2(a, 0.0lf), dd_two_prod(k, PIO2_1));
        r = dd_sub(r, dd_two_prod(k, PIO2_2));
        r = dd_add_d(r, -k * PIO2_3);
        q = int(k) & 3;
    } else {
        q = reduce_payne_hanek(a, r);
    }
    if (x < 0.0lf) {
        r = -r;
        q = (4 - q) & 3;
    }
    return q;
}

// sin(r) for |r| <= pi/4 + a little: r + r^3 (-1/3! + r^2/5! - ... - r^20/23!).
dvec2 dd_sin_small(dvec2 r) {
    dvec2 r2 = dd_mul(r, r);
    dvec2 p = -INV_FACT[21];  // -1/23!
    [[dont_unroll]] for (int n = 10; n >= 1; n--) {
        dvec2 c = INV_FACT[2 * n - 1];  // 1/(2n+1)!
        p = dd_add(dd_mul(p, r2), (n % 2 == 1) ? -c : c);
    }
    return dd_add(r, dd_mul(dd_mul(r, r2), p));
}

// cos(r) for |r| <= pi/4 + a little: 1 + r^2 (-1/2! + r^2/4! - ... - r^20/22!).
dvec2 dd_cos_small(dvec2 r) {
    dvec2 r2 = dd_mul(r, r);
    dvec2 p = -INV_FACT[20];  // -1/22!
    [[dont_unroll]] for (int n = 10; n >= 1; n--) {
        dvec2 c = INV_FACT[2 * n - 2];  // 1/(2n)!
        p = dd_add(dd_mul(p, r2), (n % 2 == 1) ? -c : c);
    }
    return dd_add_d(dd_mul(r2, p), 1.0lf);
}

double f64_sin(double x) {
    if (isnan(x) || isinf(x)) return f64_nan();
    if (x == 0.0lf) return x;
    dvec2 r;
    int q = reduce_pio2(x, r);
    dvec2 v = (q & 1) == 0 ? dd_sin_small(r) : dd_cos_small(r);
    return q >= 2 ? -v.x : v.x;
}

double f64_cos(double x) {
    if (isnan(x) || isinf(x)) return f64_nan();
    dvec2 r;
    int q = reduce_pio2(x, r);
    dvec2 v = (q & 1) == 0 ? dd_cos_small(r) : dd_sin_small(r);
    return (q == 1 || q == 2) ? -v.x : v.x;
}

double f64_tan(double x) {
    if (isnan(x) || isinf(x)) return f64_nan();
    if (x == 0.0lf) return x;
    dvec2 r;
    int q = reduce_pio2(x, r);
    dvec2 s = dd_sin_small(r);
    dvec2 c = dd_cos_small(r);
    return (q & 1) == 0 ? dd_div(s, c).x : -dd_div(c, s).x;
}

// atan(a) for a >= 0 (a may be inf): atan(a) = pi/2 - atan(1/a) above 1, then three
// halvings t -> t / (1 + sqrt(1 + t^2)) to |t| <= tan(pi/32), then
// 8 (t - t^3/3 + t^5/5 - ... - t^23/23).
dvec2 dd_atan(dvec2 a) {
    if (isinf(a.x)) return DD_PIO2;
    if (a.x < 1.0e-20lf) return a;  // a^3/3 is below 2^-106 a (and halving would lose subnormal bits)
    // Above 1e20, atan(1/a) = 1/a to double-double (the rounding of 1/a is below 2^-119
    // pi/2): dd_div would split a (a product with 2^27 + 1), which overflows near f64::MAX
    // (atan(-f64::MAX) was NaN).
    if (a.x > 1.0e20lf) return dd_sub(DD_PIO2, dvec2(1.0lf / a.x, 0.0lf));
    bool inverted = a.x > 1.0lf;
    dvec2 t = inverted ? dd_div(dvec2(1.0lf, 0.0lf), a) : a;
    [[dont_unroll]] for (int i = 0; i < 3; i++) {
        dvec2 root = dd_sqrt(dd_add_d(dd_mul(t, t), 1.0lf));
        t = dd_div(t, dd_add_d(root, 1.0lf));
    }
    dvec2 t2 = dd_mul(t, t);
    dvec2 p = -INV_ODD[10];  // -1/23
    [[dont_unroll]] for (int n = 10; n >= 1; n--) {
        dvec2 c = INV_ODD[n - 1];  // 1/(2n+1)
        p = dd_add(dd_mul(p, t2), (n % 2 == 1) ? -c : c);
    }
    // p now is -1/3 + t2/5 - ...: atan(t) = t + t^3 p
    dvec2 at = dd_add(t, dd_mul(dd_mul(t, t2), p)) * 8.0lf;
    return inverted ? dd_sub(DD_PIO2, at) : at;
}

double f64_atan(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    return f64_copysign(dd_atan(dvec2(abs(x), 0.0lf)).x, x);
}

double f64_asin(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    // atan(a / sqrt((1 - a)(1 + a)))
    dvec2 c2 = dd_mul(dd_two_sum(1.0lf, -a), dd_two_sum(1.0lf, a));
    dvec2 r = c2.x == 0.0lf ? DD_PIO2 : dd_atan(dd_div(dvec2(a, 0.0lf), dd_sqrt(c2)));
    return f64_copysign(r.x, x);
}

double f64_acos(double x) {
    if (isnan(x)) return x;
    if (abs(x) > 1.0lf) return f64_nan();
    if (x == -1.0lf) return DD_PI.x;
    // 2 atan(sqrt((1 - x) / (1 + x)))
    dvec2 q = dd_div(dd_two_sum(1.0lf, -x), dd_two_sum(1.0lf, x));
    return (dd_atan(dd_sqrt(q)) * 2.0lf).x;
}

// atan2 with C99 special cases, as nxv_atan2 in math.glsl.
double f64_atan2(double y, double x) {
    if (isnan(x) || isnan(y)) return x + y;
    bool neg_y = (unpackDouble2x32(y).y >> 31) != 0u;
    if (y == 0.0lf) {
        bool neg_x = x < 0.0lf || (x == 0.0lf && (unpackDouble2x32(x).y >> 31) != 0u);
        if (!neg_x) return y;
        return neg_y ? -DD_PI.x : DD_PI.x;
    }
    double ax = abs(x);
    double ay = abs(y);
    dvec2 r;
    if (isinf(ax) && isinf(ay)) {
        r = x > 0.0lf ? DD_PIO2 * 0.5lf : dd_mul_d(DD_PIO2, 1.5lf);
    } else if (x == 0.0lf || isinf(ay) || isinf(ay / ax)) {
        r = DD_PIO2;
    } else if (isinf(ax)) {
        r = x > 0.0lf ? dvec2(0.0lf) : DD_PI;
    } else {
        // The double-double steps split their operands (a product with 2^27 + 1), which
        // overflows near the top of the range and loses bits among subnormals: a ratio
        // outside [2^-500, 2^500] takes atan(q) = q (or pi/2 - 1/q), and the operands of
        // the others are scaled by a power of two (exact) into [2^-500, 2^500].
        double q = ay / ax;
        dvec2 t;
        if (q < 3.054936363499605e-151lf) {  // 2^-500
            t = dvec2(q, 0.0lf);
        } else if (q > 3.273390607896142e150lf) {  // 2^500
            t = dd_sub(DD_PIO2, dvec2(1.0lf / q, 0.0lf));
        } else {
            double big = max(ay, ax);
            double scale = big > 3.273390607896142e150lf ? 2.409919865102884e-181lf  // 2^-600
                         : big < 3.054936363499605e-151lf ? 4.149515568880993e180lf  // 2^600
                         : 1.0lf;
            t = dd_atan(dd_div(dvec2(ay * scale, 0.0lf), dvec2(ax * scale, 0.0lf)));
        }
        r = x > 0.0lf ? t : dd_sub(DD_PI, t);
    }
    return neg_y ? -r.x : r.x;
}
