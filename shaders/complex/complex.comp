#version 460
// Complex numbers (c64, c128): element-wise unary and binary ops, conversions to and from
// complex types, and sum/product along contiguous rows. Components compute in T: f64 on
// devices with it (Nx.BinaryBackend computes complex values in Erlang floats, f64) and f32
// otherwise. The formulas are those of the `complex` library Nx uses, so results match
// Nx.BinaryBackend's, special values included.
//
// Built with COMPLEX_MATH, the kernel also has the transcendental functions
// (common/complex_math.glsl): COMPLEX_MATH_UNARY names the unary op it computes (a
// constant, one module per function for f64, whose library functions are large; or `op`,
// every function, for the f32 module) and COMPLEX_MATH_POW adds pow.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint OPS = 0u;
layout(constant_id = 1) const uint MODES = 0u;
// OPS = op | a_ty << 8 | b_ty << 16 | out_ty << 24
// MODES = a_mode | b_mode << 2 | kind << 4; a mode 0: strided, 1: contiguous, 2: scalar.
// kind 0: unary (op is a `UnaryOp` code), 1: binary (a `BinaryOp` code), 2: fold each
// contiguous row of dims[0] elements with add or multiply (a `BinaryOp` code).
#define KIND_UNARY 0u
#define KIND_BINARY 1u
#define KIND_ROWS 2u

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint n;
    uint rank;
    int a_off;
    int b_off;
    uint dims[MAX_RANK];
    int a_strides[MAX_RANK];
    int b_strides[MAX_RANK];
} pc;

// Op codes: keep in sync with `UnaryOp` and `BinaryOp` in ops/elementwise.rs.
#define U_IDENTITY 0u
#define U_NEGATE 1u
#define U_ABS 2u
#define U_EXP 7u
#define U_EXPM1 8u
#define U_LOG 9u
#define U_LOG1P 10u
#define U_SIGMOID 11u
#define U_SIN 12u
#define U_COS 13u
#define U_TAN 14u
#define U_SINH 15u
#define U_COSH 16u
#define U_TANH 17u
#define U_ASIN 18u
#define U_ACOS 19u
#define U_ATAN 20u
#define U_ASINH 21u
#define U_ACOSH 22u
#define U_ATANH 23u
#define U_SQRT 24u
#define U_RSQRT 25u
#define U_CBRT 26u
#define U_IS_NAN 30u
#define U_IS_INF 31u
#define U_CONJUGATE 36u
#define U_IMAG 37u
#define B_ADD 0u
#define B_SUB 1u
#define B_MUL 2u
#define B_DIV 3u
#define B_POW 4u
#define B_EQ 15u
#define B_NE 16u
#define B_MAKE_COMPLEX 24u  // re + i im from two real planes (beyond the Nx ops)

#include "../common/complex.glsl"

bool nonfinite(T x) { return isnan(x) || isinf(x); }

// Complex.abs: NaN only when both parts are; any other non-finite part gives infinity.
T cabs(CV z) {
    if (isnan(z.x) && isnan(z.y)) return z.x;
    if (nonfinite(z.x) || nonfinite(z.y)) return T(1) / T(0);
    T x = abs(z.x);
    T y = abs(z.y);
    if (x == T(0)) return y;
    if (y == T(0)) return x;
    precise T q = x > y ? T(1) + y / x * (y / x) : T(1) + x / y * (x / y);
    return (x > y ? x : y) * sqrt(q);
}

// Complex.sqrt, special values included.
CV csqrt(CV z) {
    T inf = T(1) / T(0);
    T nan = inf - inf;
    if (isnan(z.x) || isnan(z.y)) return CV(nan, nan);
    if (isinf(z.y)) return CV(inf, z.y);
    if (isinf(z.x)) return z.x > T(0) ? CV(inf, T(0)) : CV(T(0), inf);
    if (z.x == T(0) && z.y == T(0)) return z;
    T x = abs(z.x);
    T y = abs(z.y);
    precise T w = x >= y ? sqrt(x) * sqrt(T(0.5) * (T(1) + sqrt(T(1) + y / x * (y / x))))
                         : sqrt(y) * sqrt(T(0.5) * (x / y + sqrt(T(1) + x / y * (x / y))));
    if (z.x >= T(0)) return CV(w, z.y / (T(2) * w));
    T w2 = z.y >= T(0) ? w : -w;
    return CV(z.y / (T(2) * w2), w2);
}

#if defined(COMPLEX_MATH)
#include "../common/math.glsl"
#if defined(CT_F64)
#include "../common/math64.glsl"
#include "../common/math64_trig.glsl"
#include "../common/math64_special.glsl"
#endif
#include "../common/complex_math.glsl"
#endif

CV bool_c(bool b) { return CV(b ? T(1) : T(0), T(0)); }

CV unary_op(uint op, CV z) {
    switch (op) {
    case U_NEGATE: return -z;
    case U_ABS: return CV(cabs(z), T(0));
    case U_SQRT: return csqrt(z);
    case U_IS_NAN: return bool_c(isnan(z.x) || isnan(z.y));
    case U_IS_INF: return bool_c(isinf(z.x) || isinf(z.y));
    case U_CONJUGATE: return CV(z.x, -z.y);
    case U_IMAG: return CV(z.y, T(0));
    }
#if defined(COMPLEX_MATH_UNARY)
    return complex_math_unary(COMPLEX_MATH_UNARY, z);
#endif
    return z;  // U_IDENTITY: a conversion
}

CV binary_op(uint op, CV a, CV b) {
    switch (op) {
    case B_ADD: return CV(add_ieee(a.x, b.x), add_ieee(a.y, b.y));
    case B_SUB: return CV(sub_ieee(a.x, b.x), sub_ieee(a.y, b.y));
    case B_MUL: return cmul(a, b);
    case B_DIV: return cdiv(a, b);
    case B_EQ: return bool_c(a.x == b.x && a.y == b.y);
    case B_NE: return bool_c(a.x != b.x || a.y != b.y);
    case B_MAKE_COMPLEX: return CV(a.x, b.x);
#if defined(COMPLEX_MATH_POW)
    case B_POW: return c_pow(a, b);
#endif
    }
    return a;
}

void main() {
#if defined(COMPLEX_MATH) && defined(CT_F64)
    dd_one = double(min(pc.n, 1u));  // 1 whenever the kernel runs (see dd.glsl)
#endif
    const uint op = OPS & 0xFFu;
    const uint a_ty = (OPS >> 8) & 0xFFu;
    const uint b_ty = (OPS >> 16) & 0xFFu;
    const uint out_ty = (OPS >> 24) & 0xFFu;
    const uint a_mode = MODES & 3u;
    const uint b_mode = (MODES >> 2) & 3u;
    const uint kind = (MODES >> 4) & 3u;
    if (kind == KIND_ROWS) {
        // Rows of dims[0] elements, this launch folding j in [dims[1], dims[2]). Longer
        // rows than one launch may loop over take several launches (bit 0 of dims[3]:
        // continue from the running values in b_addr; bit 1: leave them there, not in
        // out), in the same order as one launch.
        uint len = pc.dims[0];
        uint split = pc.dims[3];
        for (uint i = global_index(); i < pc.n; i += global_threads()) {
            CV acc = (split & 1u) != 0u ? BufCV(pc.b_addr).v[i]
                     : op == B_MUL ? CV(T(1), T(0)) : CV(T(0), T(0));
            for (uint j = pc.dims[1]; j < pc.dims[2]; j++) {
                CV x = load_c(pc.a_addr, a_ty, i * len + j);
                acc = op == B_MUL ? cmul(x, acc) : x + acc;
            }
            if ((split & 2u) != 0u) BufCV(pc.b_addr).v[i] = acc;
            else store_c(pc.out_addr, out_ty, i, acc);
        }
        return;
    }
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        int ia = pc.a_off;
        int ib = pc.b_off;
        if (a_mode == 0u || b_mode == 0u) {
            uint rem = i;
            for (int d = int(pc.rank) - 1; d >= 0; d--) {
                uint dim = pc.dims[d];
                int c = int(rem % dim);
                ia += c * pc.a_strides[d];
                ib += c * pc.b_strides[d];
                rem /= dim;
            }
        }
        if (a_mode == 1u) ia = pc.a_off + int(i);
        if (a_mode == 2u) ia = pc.a_off;
        if (b_mode == 1u) ib = pc.b_off + int(i);
        if (b_mode == 2u) ib = pc.b_off;
        CV a = load_c(pc.a_addr, a_ty, uint(ia));
        CV r;
        if (kind == KIND_BINARY) {
            r = binary_op(op, a, load_c(pc.b_addr, b_ty, uint(ib)));
        } else {
            r = unary_op(op, a);
        }
        store_c(pc.out_addr, out_ty, i, r);
    }
}
