// f64 transcendental functions: computed in double-double (shaders/common/dd.glsl) and
// rounded once. Series and constants are from the definitions (Taylor series with
// range reduction), the constants generated to 2400 bits; no polynomial comes from
// another library. Special cases (NaN, infinities, zeros, domain edges) follow C99,
// as Erlang's :math (which Nx.BinaryBackend uses) does.
#include "dd.glsl"

const dvec2 DD_LN2 = dvec2(0.6931471805599453lf, 2.3190468138462996e-17lf);
const dvec2 DD_PI = dvec2(3.141592653589793lf, 1.2246467991473532e-16lf);
const dvec2 DD_PIO2 = dvec2(1.5707963267948966lf, 6.123233995736766e-17lf);
const dvec2 DD_2_OVER_SQRTPI = dvec2(1.1283791670955126lf, 1.533545961316588e-17lf);
const dvec2 DD_1_OVER_SQRTPI = dvec2(0.5641895835477563lf, 7.66772980658294e-18lf);
// pi/2 = PIO2_1 + PIO2_2 + PIO2_3 to 159 bits, for the reduction of |x| < 2^28.
const double PIO2_1 = 1.5707963267948966lf;
const double PIO2_2 = 6.123233995736766e-17lf;
const double PIO2_3 = -1.4973849048591698e-33lf;
const double INV_LN2 = 1.4426950408889634lf;
const double TWO_OVER_PI_D = 0.6366197723675814lf;
const double SQRT2 = 1.4142135623730951lf;

// Bits of 2/pi, 32 per word, most significant first (Payne-Hanek reduction).
const uint TWO_OVER_PI[40] = uint[](
    0xA2F9836Eu, 0x4E441529u, 0xFC2757D1u, 0xF534DDC0u, 0xDB629599u, 0x3C439041u,
    0xFE5163ABu, 0xDEBBC561u, 0xB7246E3Au, 0x424DD2E0u, 0x06492EEAu, 0x09D1921Cu,
    0xFE1DEB1Cu, 0xB129A73Eu, 0xE88235F5u, 0x2EBB4484u, 0xE99C7026u, 0xB45F7E41u,
    0x3991D639u, 0x835339F4u, 0x9C845F8Bu, 0xBDF9283Bu, 0x1FF897FFu, 0xDE05980Fu,
    0xEF2F118Bu, 0x5A0A6D1Fu, 0x6D367ECFu, 0x27CB09B7u, 0x4F463F66u, 0x9E5FEA2Du,
    0x7527BAC7u, 0xEBE5F17Bu, 0x3D0739F7u, 0x8A5292EAu, 0x6BFB5FB1u, 0x1F8D5D08u,
    0x56033046u, 0xFC7B6BABu, 0xF0CFBC20u, 0x9AF4361Du
);

const dvec2 INV_FACT[24] = dvec2[](  // 1/n!, n = 2..25
    dvec2(0.5lf, 0.0lf), dvec2(0.16666666666666666lf, 9.25185853854297e-18lf),
    dvec2(0.041666666666666664lf, 2.3129646346357427e-18lf), dvec2(0.008333333333333333lf, 1.1564823173178714e-19lf),
    dvec2(0.001388888888888889lf, -5.300543954373577e-20lf), dvec2(0.0001984126984126984lf, 1.7209558293420705e-22lf),
    dvec2(2.48015873015873e-05lf, 2.1511947866775882e-23lf), dvec2(2.7557319223985893e-06lf, -1.858393274046472e-22lf),
    dvec2(2.755731922398589e-07lf, 2.3767714622250297e-23lf), dvec2(2.505210838544172e-08lf, -1.448814070935912e-24lf),
    dvec2(2.08767569878681e-09lf, -1.20734505911326e-25lf), dvec2(1.6059043836821613e-10lf, 1.2585294588752098e-26lf),
    dvec2(1.1470745597729725e-11lf, 2.0655512752830745e-28lf), dvec2(7.647163731819816e-13lf, 7.03872877733453e-30lf),
    dvec2(4.779477332387385e-14lf, 4.399205485834081e-31lf), dvec2(2.8114572543455206e-15lf, 1.6508842730861433e-31lf),
    dvec2(1.5619206968586225e-16lf, 1.1910679660273754e-32lf), dvec2(8.22063524662433e-18lf, 2.2141894119604265e-34lf),
    dvec2(4.110317623312165e-19lf, 1.4412973378659527e-36lf), dvec2(1.9572941063391263e-20lf, -1.3643503830087908e-36lf),
    dvec2(8.896791392450574e-22lf, -7.911402614872376e-38lf), dvec2(3.868170170630684e-23lf, -8.843177655482344e-40lf),
    dvec2(1.6117375710961184e-24lf, -3.6846573564509766e-41lf), dvec2(6.446950284384474e-26lf, -1.9330404233703465e-42lf)
);

const dvec2 INV_ODD[16] = dvec2[](  // 1/n, n = 3, 5, ..., 33
    dvec2(0.3333333333333333lf, 1.850371707708594e-17lf), dvec2(0.2lf, -1.1102230246251566e-17lf),
    dvec2(0.14285714285714285lf, 7.93016446160826e-18lf), dvec2(0.1111111111111111lf, 6.1679056923619804e-18lf),
    dvec2(0.09090909090909091lf, -2.523234146875356e-18lf), dvec2(0.07692307692307693lf, -4.270088556250602e-18lf),
    dvec2(0.06666666666666667lf, 9.251858538542971e-19lf), dvec2(0.058823529411764705lf, 8.163404592832033e-19lf),
    dvec2(0.05263157894736842lf, 2.921639538487254e-18lf), dvec2(0.047619047619047616lf, 2.64338815386942e-18lf),
    dvec2(0.043478260869565216lf, 1.206764157201257e-18lf), dvec2(0.04lf, -8.326672684688674e-19lf),
    dvec2(0.037037037037037035lf, 2.05596856412066e-18lf), dvec2(0.034482758620689655lf, 4.785444071660157e-19lf),
    dvec2(0.03225806451612903lf, 8.953411488912552e-19lf), dvec2(0.030303030303030304lf, -8.410780489584519e-19lf)
);

double f64_nan() {
    return packDouble2x32(uvec2(0u, 0x7FF80000u));
}

double f64_inf() {
    return packDouble2x32(uvec2(0u, 0x7FF00000u));
}

double f64_copysign(double m, double s) {
    return (unpackDouble2x32(s).y >> 31) != 0u ? -abs(m) : abs(m);
}

// ---- exp and log ----

// expm1(r) for |r| <= 0.35: r + r^2 (1/2! + r/3! + ... + r^16/18!); the next term is
// below 2^-80 r.
dvec2 dd_expm1_small(dvec2 r) {
    dvec2 p = INV_FACT[16];
    [[dont_unroll]] for (int i = 15; i >= 0; i--) p = dd_add(dd_mul(p, r), INV_FACT[i]);
    return dd_add(r, dd_mul(dd_mul(r, r), p));
}

// exp(a) = m * 2^k with m (returned) in [0.7, 1.42]; a = k ln2 + r, |r| <= ln2 / 2.
dvec2 dd_exp_parts(dvec2 a, out int k) {
    double kd = roundEven(a.x * INV_LN2);
    k = int(kd);
    dvec2 r = dd_sub(a, dd_mul_d(DD_LN2, kd));
    return dd_add_d(dd_expm1_small(r), 1.0lf);
}

// expm1(a) for -44 <= a <= 60.
dvec2 dd_expm1(dvec2 a) {
    if (abs(a.x) <= 0.34lf) return dd_expm1_small(a);
    int k;
    dvec2 m = dd_exp_parts(a, k);
    return dd_add_d(m * dd_pow2(k), -1.0lf);
}

double f64_exp(double x) {
    if (isnan(x)) return x;
    if (x > 710.0lf) return f64_inf();
    if (x < -746.0lf) return 0.0lf;
    int k;
    dvec2 m = dd_exp_parts(dvec2(x, 0.0lf), k);
    return dd_scale(m, k);
}

double f64_expm1(double x) {
    if (isnan(x)) return x;
    if (x < -40.0lf) return -1.0lf;  // expm1(-40) = -1 + 4e-18 rounds to -1
    if (x > 60.0lf) return f64_exp(x);  // the -1 is far below half an ulp
    if (x == 0.0lf) return x;  // keeps -0
    return dd_expm1(dvec2(x, 0.0lf)).x;
}

// log(1 + f) for f in [sqrt(1/2) - 1, sqrt(2) - 1]: 2 atanh(s), s = f / (2 + f), as
// 2s (1 + s^2/3 + s^4/5 + ... + s^30/31); s^2 <= 0.0295, so the next term is < 2^-80.
dvec2 dd_log1p_small(dvec2 f) {
    dvec2 s = dd_div(f, dd_add_d(f, 2.0lf));
    dvec2 s2 = dd_mul(s, s);
    dvec2 q = INV_ODD[14];
    [[dont_unroll]] for (int i = 13; i >= 0; i--) q = dd_add(dd_mul(q, s2), INV_ODD[i]);
    dvec2 two_s = s * 2.0lf;
    return dd_add(two_s, dd_mul(dd_mul(two_s, s2), q));
}

// log(a) for a finite double-double a > 0.
dvec2 dd_log(dvec2 a) {
    int e = dd_exponent(a.x);
    dvec2 m = dd_scale_down(a, e);
    if (m.x > SQRT2) {
        m *= 0.5lf;
        e += 1;
    }
    return dd_add(dd_log1p_small(dd_add_d(m, -1.0lf)), dd_mul_d(DD_LN2, double(e)));
}

// log(1 + w) for w > -1, without forming 1 + w where that would lose w's low bits.
dvec2 dd_log1p(dvec2 w) {
    if (w.x > -0.2928932188134524lf && w.x < 0.41421356237309503lf) return dd_log1p_small(w);
    return dd_log(dd_add_d(w, 1.0lf));
}

double f64_log(double x) {
    if (isnan(x)) return x;
    if (x < 0.0lf) return f64_nan();
    if (x == 0.0lf) return -f64_inf();
    if (isinf(x)) return x;
    return dd_log(dvec2(x, 0.0lf)).x;
}

double f64_log1p(double x) {
    if (isnan(x)) return x;
    if (x < -1.0lf) return f64_nan();
    if (x == -1.0lf) return -f64_inf();
    // Below 2^-54, log1p(x) = x - x^2/2 rounds to x (and x / (2 + x) would lose a
    // subnormal's last bit).
    if (isinf(x) || abs(x) < 5.551115123125783e-17lf) return x;
    return dd_log1p(dvec2(x, 0.0lf)).x;
}

double f64_sigmoid(double x) {
    if (isnan(x)) return x;
    if (x > 40.0lf) return 1.0lf;  // 1 - 4e-18 rounds to 1
    if (x < -709.0lf) return f64_exp(x);  // e^x / (1 + e^x) = e^x (1 - e^x)
    int k;
    dvec2 m = dd_exp_parts(dvec2(-x, 0.0lf), k);
    dvec2 den = dd_add_d(m * dd_pow2(k), 1.0lf);
    return dd_div(dvec2(1.0lf, 0.0lf), den).x;
}

// ---- hyperbolic ----

// exp(a) / 2 = m * 2^k (m returned), for a >= 0.
dvec2 dd_half_exp(double a, out int k) {
    return dd_exp_parts(dd_sub(dvec2(a, 0.0lf), DD_LN2), k);
}

double f64_sinh(double x) {
    if (isnan(x) || isinf(x) || x == 0.0lf) return x;
    double a = abs(x);
    // Overflows (sinh(710.48) is the largest finite); also keeps k below int range.
    if (a > 711.0lf) return f64_copysign(f64_inf(), x);
    double r;
    if (a < 1.0lf) {
        // (e + e / (e + 1)) / 2 with e = expm1(a): no cancellation near 0.
        dvec2 e = dd_expm1(dvec2(a, 0.0lf));
        r = (dd_add(e, dd_div(e, dd_add_d(e, 1.0lf))) * 0.5lf).x;
    } else {
        // exp(a)/2 - exp(-a)/2 = (m - 2^-2k / (4m)) * 2^k.
        int k;
        dvec2 m = dd_half_exp(a, k);
        dvec2 tail = k > 60 ? dvec2(0.0lf) : dd_div(dvec2(0.25lf * dd_pow2(-2 * k), 0.0lf), m);
        r = dd_scale(dd_sub(m, tail), k);
    }
    return f64_copysign(r, x);
}

double f64_cosh(double x) {
    if (isnan(x)) return x;
    double a = abs(x);
    if (a > 711.0lf) return f64_inf();  // also keeps k below int range
    int k;
    dvec2 m = dd_half_exp(a, k);
    dvec2 tail = k > 60 ? dvec2(0.0lf) : dd_div(dvec2(0.25lf * dd_pow2(-2 * k), 0.0lf), m);
    return dd_scale(dd_add(m, tail), k);
}

double f64_tanh(double x) {
    if (isnan(x) || x == 0.0lf) return x;
    double a = abs(x);
    if (a > 22.0lf) return f64_copysign(1.0lf, x);  // 1 - 2e-19 rounds to 1
    dvec2 e = dd_expm1(dvec2(-2.0lf * a, 0.0lf));
    return f64_copysign(dd_div(-e, dd_add_d(e, 2.0lf)).x, x);
}

double f64_asinh(double x) {
    // Below 2^-54, asinh(x) = x - x^3/6 rounds to x.
    if (isnan(x) || isinf(x) || abs(x) < 5.551115123125783e-17lf) return x;
    double a = abs(x);
    dvec2 r;
    if (a > 268435456.0lf) {
        r = dd_add(dd_log(dvec2(a, 0.0lf)), DD_LN2);  // log(2a); 1/(4a^2) is below 2^-58
    } else {
        // log1p(a + a^2 / (1 + sqrt(1 + a^2)))
        dvec2 t = dd_two_prod(a, a);
        dvec2 u = dd_add_d(dd_sqrt(dd_add_d(t, 1.0lf)), 1.0lf);
        r = dd_log1p(dd_add_d(dd_div(t, u), a));
    }
    return f64_copysign(r.x, x);
}

double f64_acosh(double x) {
    if (isnan(x)) return x;
    if (x < 1.0lf) return f64_nan();
    if (isinf(x)) return x;
    if (x > 268435456.0lf) return dd_add(dd_log(dvec2(x, 0.0lf)), DD_LN2).x;
    // log1p(t + sqrt(t (x + 1))), t = x - 1
    dvec2 t = dd_two_sum(x, -1.0lf);
    dvec2 s = dd_sqrt(dd_mul(t, dd_two_sum(x, 1.0lf)));
    return dd_log1p(dd_add(t, s)).x;
}

double f64_atanh(double x) {
    // Below 2^-54, atanh(x) = x + x^3/3 rounds to x.
    if (isnan(x) || abs(x) < 5.551115123125783e-17lf) return x;
    double a = abs(x);
    if (a > 1.0lf) return f64_nan();
    if (a == 1.0lf) return f64_copysign(f64_inf(), x);
    // log1p(2a / (1 - a)) / 2
    dvec2 q = dd_div(dvec2(2.0lf * a, 0.0lf), dd_two_sum(1.0lf, -a));
    return f64_copysign(dd_log1p(q).x * 0.5lf, x);
}
