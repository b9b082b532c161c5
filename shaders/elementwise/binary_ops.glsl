// The binary element-wise ops in the compute type T: `apply(op, a, b)` (and for s64,
// `big_apply`, the ops on a u64 operand at or above 2^63). Included by binary.comp and by
// the library of generated kernels (shaders/codegen/lib.comp), so both compute each op
// with the same code. Needs types.glsl and math.glsl first.

// Op codes: keep in sync with `BinaryOp` in native/nx_vulkan/src/ops/elementwise.rs.
#define B_ADD 0u
#define B_SUB 1u
#define B_MUL 2u
#define B_DIV 3u
#define B_POW 4u
#define B_REM 5u
#define B_ATAN2 6u
#define B_MIN 7u
#define B_MAX 8u
#define B_QUOTIENT 9u
#define B_BAND 10u
#define B_BOR 11u
#define B_BXOR 12u
#define B_LSHIFT 13u
#define B_RSHIFT 14u
#define B_EQ 15u
#define B_NE 16u
#define B_GT 17u
#define B_LT 18u
#define B_GE 19u
#define B_LE 20u
#define B_LAND 21u
#define B_LOR 22u
#define B_LXOR 23u

#define BOOL_T(c) ((c) ? T(1) : T(0))

#if defined(IS_INT)
#if defined(CT_I64) || defined(CT_U64)
#define SHIFT_WIDTH 64
bool shift_in_range(T b) { return uint64_t(b) < 64ul; }
#else
#define SHIFT_WIDTH 32
bool shift_in_range(T b) { return uint(b) < 32u; }
#endif
#endif

T apply(uint op, T a, T b) {
#if defined(CT_F32) && defined(EXACT_VIA_F64)
    // Subnormal operands and results as themselves on drivers that flush them (see
    // f32s_add); NaN compares false as with the plain operators.
    switch (op) {
    case B_ADD: return f32s_add(a, b);
    case B_SUB: return f32s_sub(a, b);
    case B_MUL: return f32s_mul(a, b);
    case B_EQ: return BOOL_T(f32s_equal(a, b));
    case B_NE: return BOOL_T(!f32s_equal(a, b));
    case B_GT: return BOOL_T(f32s_less(b, a));
    case B_LT: return BOOL_T(f32s_less(a, b));
    case B_GE: return BOOL_T(f32s_less(b, a) || f32s_equal(a, b));
    case B_LE: return BOOL_T(f32s_less(a, b) || f32s_equal(a, b));
    case B_LAND: return BOOL_T(!f32s_equal(a, T(0)) && !f32s_equal(b, T(0)));
    case B_LOR: return BOOL_T(!f32s_equal(a, T(0)) || !f32s_equal(b, T(0)));
    case B_LXOR: return BOOL_T(!f32s_equal(a, T(0)) != !f32s_equal(b, T(0)));
    // Equal operands (-0.0 and 0.0) give the first, as Nx (Erlang's min/max).
    case B_MIN: return (isnan(a) || f32s_less(a, b) || f32s_equal(a, b)) ? a : b;
    case B_MAX: return (isnan(a) || f32s_less(b, a) || f32s_equal(a, b)) ? a : b;
    }
#endif
    switch (op) {
    case B_ADD: return a + b;
    case B_SUB: return a - b;
    case B_MUL: return a * b;
    case B_EQ: return BOOL_T(a == b);
    case B_NE: return BOOL_T(a != b);
    case B_GT: return BOOL_T(a > b);
    case B_LT: return BOOL_T(a < b);
    case B_GE: return BOOL_T(a >= b);
    case B_LE: return BOOL_T(a <= b);
    case B_LAND: return BOOL_T(a != T(0) && b != T(0));
    case B_LOR: return BOOL_T(a != T(0) || b != T(0));
    case B_LXOR: return BOOL_T((a != T(0)) != (b != T(0)));
#if defined(IS_FLOAT)
    case B_DIV: return nxv_div(a, b);
    // NaN propagates through min and max, as in XLA; equal operands (-0.0 and 0.0) give
    // the first, as Nx (Erlang's min/max).
    case B_MIN: return (isnan(a) || a <= b) ? a : b;
    case B_MAX: return (isnan(a) || a >= b) ? a : b;
    case B_REM: return nxv_fmod(a, b);
#endif
#if defined(CT_F32) && !defined(F64_MATH_OP)
    case B_POW: return nxv_pow(a, b);
    case B_ATAN2: return nxv_atan2(a, b);
#endif
#if defined(F64_MATH_OP)
#if defined(CT_F64)
    case F64_MATH_OP: return F64_MATH_FN(a, b);  // pow or atan2, one per module
#else
    case F64_MATH_OP: return f32_for_store(F64_MATH_FN(f32_widen(a), f32_widen(b)), (OPS >> 24) & 0xFFu);  // f32 through f64
#endif
#endif
#if defined(IS_INT)
    case B_MIN: return min(a, b);
    case B_MAX: return max(a, b);
    // Truncated division; the remainder takes the dividend's sign (Elixir's div/rem).
    case B_QUOTIENT: return b == T(0) ? T(0) : a / b;
    case B_REM: return b == T(0) ? T(0) : a - b * (a / b);
    case B_BAND: return a & b;
    case B_BOR: return a | b;
    case B_BXOR: return a ^ b;
    // A shift by the compute type's width or more (or a negative one) is undefined in
    // GLSL; Nx shifts the value out: 0, or -1 for a negative value shifted right.
    case B_LSHIFT: return shift_in_range(b) ? a << b : T(0);
#if defined(IS_SIGNED)
    // (A shift by width - 1 fills with the sign bit; lavapipe miscompiled `a < 0 ? -1 : 0`
    // here for an s32 operand widened to s64.)
    case B_RSHIFT: return a >> (shift_in_range(b) ? b : T(SHIFT_WIDTH - 1));
#else
    case B_RSHIFT: return shift_in_range(b) ? a >> b : T(0);
#endif
    case B_POW: {
        T r = T(1);
        T base = a;
        T e = b;
#if defined(IS_SIGNED)
        if (e < T(0)) return T(0);
#endif
        while (e > T(0)) {
            if ((e & T(1)) != T(0)) r *= base;
            base *= base;
            e >>= 1;
        }
        return r;
    }
#endif
    }
    return T(0);
}

#if defined(CT_I64)
// u64 mixed with a signed type computes in s64 (Nx merges them to s64), where a u64 value
// at or above 2^63 loads as a negative number. Nx orders and divides the operands' own
// values: `big_apply` does, for an operand known to be such a value (`a_big`/`b_big`,
// not both); the ops whose bits do not depend on it (add, and, ...) go to `apply`.
// The sign of an s64 value, read from its high word: lavapipe (LLVM 15) judged `x < 0`
// wrongly for some lanes where x was an s32 operand widened to s64 (s32 / u64 gave
// -1 / (2^64 - 1) = 1).
bool negative(T x) { return int(unpackUint2x32(uint64_t(x)).y) < 0; }
uint64_t magnitude(T x, bool big) { return big || !negative(x) ? uint64_t(x) : uint64_t(-x); }

T big_apply(uint op, T a, T b, bool a_big, bool b_big) {
    const bool a_above = a_big;  // otherwise b is the big one, above a
    switch (op) {
    case B_MIN: return a_above ? b : a;
    case B_MAX: return a_above ? a : b;
    case B_EQ: return T(0);
    case B_NE: return T(1);
    case B_GT: return BOOL_T(a_above);
    case B_GE: return BOOL_T(a_above);
    case B_LT: return BOOL_T(!a_above);
    case B_LE: return BOOL_T(!a_above);
    case B_QUOTIENT: {
        if (b == T(0)) return T(0);
        uint64_t q = magnitude(a, a_big) / magnitude(b, b_big);
        return ((negative(a) && !a_big) != (negative(b) && !b_big)) ? -T(q) : T(q);
    }
    case B_REM: {
        if (b == T(0)) return T(0);
        uint64_t r = magnitude(a, a_big) % magnitude(b, b_big);
        return (negative(a) && !a_big) ? -T(r) : T(r);
    }
    case B_RSHIFT: return a_big ? (shift_in_range(b) ? T(uint64_t(a) >> uint64_t(b)) : T(0)) : apply(op, a, b);
    }
    return apply(op, a, b);
}
#endif
