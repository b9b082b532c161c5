// f32 exp correctly rounded, mostly in f32 arithmetic: a fast path in front of
// math32x.glsl's f32x_exp (double, rounded once), which answers only where it can prove
// its result is e^x rounded to nearest. Elsewhere (|x| >= 87: subnormal, overflowing or
// infinite results, NaN; and about 0.03% of other arguments, whose e^x lies too near a
// midpoint between two floats for its error bound) the caller takes the double path.
// Worth it where f64 runs at a small fraction of f32's rate (not measured here); on the
// H200, whose f64 runs at half, the double path is faster (ops::exp_fast_path).
//
// e^x = 2^m 2^(j/32) e^r with k = 32 m + j = round(x 32 / ln 2) and r = x - k ln2/32,
// |r| <= ln2/64 (about): k ln2/32 in three parts (Cody and Waite; the first two of 11 and
// 10 bits, so k times each is exact and so is x minus the first), r as r_hi + r_lo
// (Knuth's two-sum), 2^(j/32) as th + tl from a table the workgroup computes in double
// (exp32_init), th r_hi as an exact sum of two floats (Dekker's product on 12-bit
// halves cut by masking), e^r - 1 - r_hi by a degree-5 polynomial, the pieces summed
// with error-free transformations into res + tt, and res kept only if |tt| plus the
// error bound (2^-34 res; a bound of 2^-40 still gave no wrong result on a 1-in-997
// sample) stays inside half an ulp on tt's side. Only +, - and * (each correctly
// rounded, as Vulkan requires): no fma, which Vulkan lets a driver split into a product
// and a sum (lavapipe does). A host model of exactly these operations
// (tests/exp32_model.rs), with and without flushing subnormal intermediates, agreed with
// f64 exp rounded to f32 for every f32 argument below 87 in magnitude.
//
// Needs math32x.glsl (f32x_exp, its table filled first by f32x_exp_init) and a workgroup
// of at least 32 invocations that all call exp32_init at the start of main.

shared float exp32_table[96];  // 2^(j/32), j = 0..31: th's 12-bit head and tail, tl

// 1.0, but unknown to the compiler (set by exp32_init): NVIDIA's driver simplifies
// b - ((a + b) - a) to 0 despite NoContraction (see dd.glsl's dd_one).
float exp32_one = 1.0;

// x with its last 12 significand bits cleared: the head of a split into two floats of at
// most 12 significant bits each (the tail, x minus the head, is exact).
float exp32_head(float x) {
    return uintBitsToFloat(floatBitsToUint(x) & 0xFFFFF000u);
}

// Fills the table (invocations 0-31, in double) and sets exp32_one from `one`, a value
// the caller knows is 1 but the compiler does not (from a push constant).
void exp32_init(float one) {
    exp32_one = one;
    uint lid = gl_LocalInvocationIndex;
    if (lid < 32u) {
        double t = f32x_exp(double(lid) * 0.02166084939249829lf);  // ln2 / 32
        float th = float(t);
        float head = exp32_head(th);
        exp32_table[3u * lid] = head;
        exp32_table[3u * lid + 1u] = th - head;
        exp32_table[3u * lid + 2u] = float(t - double(th));
    }
    barrier();
}

// Sets y to e^x rounded to nearest and returns true, where the fast path proves it.
bool exp32_fast(float x, out float y) {
    y = 0.0;
    if (!(abs(x) < 87.0)) return false;  // also NaN
    const float INV_L = uintBitsToFloat(0x4238aa3bu);  // RN(32 / ln2)
    const float L1 = uintBitsToFloat(0x3cb16000u);     // ln2 / 32 to 11 bits
    const float L2 = uintBitsToFloat(0x3710c000u);     // the next 10
    const float L3 = uintBitsToFloat(0xae82e308u);     // RN(ln2 / 32 - L1 - L2)
    const float C5 = uintBitsToFloat(0x3c088889u);     // RN(1/120)
    const float C4 = uintBitsToFloat(0x3d2aaaabu);     // RN(1/24)
    const float C3 = uintBitsToFloat(0x3e2aaaabu);     // RN(1/6)
    const float EPS = uintBitsToFloat(0x2e800000u);    // 2^-34
    precise float k = roundEven(x * INV_L);  // |k| <= 4017
    precise float t1 = x - k * L1;  // exact, as is k * L2
    precise float p2 = k * L2;
    precise float r_hi = t1 - p2;
    precise float bv = (r_hi - t1) * exp32_one;
    precise float r_lo = ((t1 - (r_hi - bv) * exp32_one) + (-p2 - bv)) - k * L3;
    int ki = int(k);
    uint j = uint(ki & 31);
    int m = ki >> 5;  // floor(k / 32)
    float ta = exp32_table[3u * j];
    float tb = exp32_table[3u * j + 1u];
    float tl = exp32_table[3u * j + 2u];
    precise float th = ta + tb;
    // th r_hi = s_hi + s_lo exactly (Dekker): every partial product is exact.
    float r1 = exp32_head(r_hi);
    precise float r2 = r_hi - r1;
    precise float s_hi = th * r_hi;
    precise float s_lo = (((ta * r1 - s_hi) + ta * r2) + tb * r1) + tb * r2;
    precise float r = r_hi + r_lo;
    precise float p = ((r * C5 + C4) * r + C3) * r + 0.5;
    precise float q = p * (r * r) + r_lo;  // e^r - 1 - r_hi
    precise float low = (th * q + s_lo) + (tl * (r_hi + q) + tl);
    // th + s_hi + low, as res + tt exactly (two fast two-sums).
    precise float a = th + s_hi;
    precise float b = s_hi - (a - th) * exp32_one;
    precise float c = b + low;
    precise float res = a + c;
    precise float tt = c - (res - a) * exp32_one;
    uint rb = floatBitsToUint(res);
    float half_ulp = uintBitsToFloat((rb & 0x7F800000u) - (24u << 23));
    if ((rb & 0x7FFFFFu) == 0u && tt < 0.0) half_ulp *= 0.5;  // the float below is nearer
    if (!(abs(tt) + EPS * res < half_ulp)) return false;
    y = res * uintBitsToFloat(uint(m + 127) << 23);  // exact: the result is normal
    return true;
}
