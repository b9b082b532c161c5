// The reduction ops shared by reduce.comp and colreduce.comp: identity and combine in T.
// Op codes: keep in sync with `ReduceOp` in native/nx_vulkan/src/ops/reduce.rs.
#define R_SUM 0u
#define R_PRODUCT 1u
#define R_MAX 2u
#define R_MIN 3u
#define R_ALL 4u
#define R_ANY 5u

T identity_of(uint op) {
    switch (op) {
    case R_PRODUCT: case R_ALL: return T(1);
#if defined(IS_FLOAT)
    case R_MAX: return T(-1.0 / 0.0);
    case R_MIN: return T(1.0 / 0.0);
#elif defined(CT_I32)
    case R_MAX: return int(0x80000000u);
    case R_MIN: return 0x7FFFFFFF;
#elif defined(CT_U32)
    case R_MAX: return 0u;
    case R_MIN: return 0xFFFFFFFFu;
#elif defined(CT_I64)
    case R_MAX: return int64_t(0x8000000000000000ul);
    case R_MIN: return int64_t(0x7FFFFFFFFFFFFFFFul);
#elif defined(CT_U64)
    case R_MAX: return 0ul;
    case R_MIN: return 0xFFFFFFFFFFFFFFFFul;
#endif
    }
    return T(0);
}

T combine(uint op, T a, T b) {
    switch (op) {
    case R_SUM: return a + b;
    case R_PRODUCT: return a * b;
#if defined(IS_FLOAT)
    // `a` comes first: it stays on a tie (0.0 and -0.0), as Nx.BinaryBackend's fold keeps
    // its accumulator; the first NaN stays.
    case R_MAX: return (isnan(a) || (!isnan(b) && !T_LESS(a, b))) ? a : b;
    case R_MIN: return (isnan(a) || (!isnan(b) && !T_LESS(b, a))) ? a : b;
#else
    case R_MAX: return max(a, b);
    case R_MIN: return min(a, b);
#endif
    // T_EQUAL: an f32 subnormal is nonzero, also where the driver's compares flush it.
    case R_ALL: return (!T_EQUAL(a, T(0)) && !T_EQUAL(b, T(0))) ? T(1) : T(0);
    case R_ANY: return (!T_EQUAL(a, T(0)) || !T_EQUAL(b, T(0))) ? T(1) : T(0);
    }
    return a;
}


// Float max/min folded by several threads: the value with the index it came from, so that
// partials from threads that read strided elements combine as a left-to-right fold would:
// NaN first, then the larger (smaller) value, then on a tie (0.0 and -0.0) the earlier one.
bool needs_index(uint op) {
#if defined(IS_FLOAT)
    return op == R_MAX || op == R_MIN;
#else
    return false;
#endif
}

void combine_at(uint op, inout T a, inout uint ka, T b, uint kb) {
#if defined(IS_FLOAT)
    bool take_b;
    if (isnan(a) || isnan(b)) {
        take_b = isnan(b) && (!isnan(a) || kb < ka);
    } else if (op == R_MIN) {
        take_b = T_LESS(b, a) || (!T_LESS(a, b) && kb < ka);
    } else {
        take_b = T_LESS(a, b) || (!T_LESS(b, a) && kb < ka);
    }
    if (take_b) {
        a = b;
        ka = kb;
    }
#else
    a = combine(op, a, b);
#endif
}
