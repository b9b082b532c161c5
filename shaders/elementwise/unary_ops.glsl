// The unary element-wise ops in the compute type T: `apply(op, x, bits)`, with `bits`
// the input type's width (for count_leading_zeros and population_count). Included by
// unary.comp and by the library of generated kernels (shaders/codegen/lib.comp), so both
// compute each op with the same code. Needs types.glsl and math.glsl first (and, for the
// library modules of unary.comp, the f64 library and the OPS constant).

// Op codes: keep in sync with `UnaryOp` in native/nx_vulkan/src/ops/elementwise.rs.
#define U_IDENTITY 0u
#define U_NEGATE 1u
#define U_ABS 2u
#define U_SIGN 3u
#define U_CEIL 4u
#define U_FLOOR 5u
#define U_ROUND 6u
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
#define U_ERF 27u
#define U_ERFC 28u
#define U_ERF_INV 29u
#define U_IS_NAN 30u
#define U_IS_INF 31u
#define U_BNOT 32u
#define U_CLZ 33u
#define U_POPCNT 34u
#define U_ZERO 35u

uint type_bits(uint ty) {
    if (ty == TY_U8 || ty == TY_S8) return 8u;
    if (ty == TY_U2 || ty == TY_S2) return 2u;
    if (ty == TY_U4 || ty == TY_S4) return 4u;
    if (ty == TY_U16 || ty == TY_S16 || ty == TY_F16 || ty == TY_BF16) return 16u;
    if (ty == TY_U64 || ty == TY_S64 || ty == TY_F64) return 64u;
    return 32u;
}

T apply(uint op, T x, uint bits) {
#if defined(CT_F32) && defined(EXACT_VIA_F64)
    // Subnormal inputs as themselves on drivers that flush them (see f32s_add).
    const bool negative = (floatBitsToUint(x) >> 31) != 0u;
    // Zero with x's sign, from the bits: glslang merges the constants -0.0 and 0.0.
    const float signed_zero = uintBitsToFloat(floatBitsToUint(x) & 0x80000000u);
    switch (op) {
    case U_NEGATE: return f32s_negate(x);
    case U_ABS: return f32s_abs(x);
    case U_SIGN: if (f32_subnormal(x)) return negative ? -1.0 : 1.0; break;
    case U_CEIL: if (f32_subnormal(x)) return negative ? signed_zero : 1.0; break;
    case U_FLOOR: if (f32_subnormal(x)) return negative ? -1.0 : signed_zero; break;
    case U_ROUND: if (f32_subnormal(x)) return abs(signed_zero); break;  // +0, as nxv_round
    }
#endif
    switch (op) {
    case U_IDENTITY: return x;
    case U_ZERO: return T(0);
#if defined(IS_FLOAT)
    case U_NEGATE: return -x;
    case U_ABS: return abs(x);
    case U_SIGN: return (isnan(x) || x == T(0)) ? x : sign(x);  // sign(-0.0) is -0.0 (IEEE, XLA, Nx)
    case U_CEIL: return ceil(x);
    case U_FLOOR: return floor(x);
    case U_ROUND: return nxv_round(x);
    case U_SQRT: return nxv_sqrt(x);
#if !defined(F64_MATH_OP)  // the library's rsqrt is 1 / sqrt(x), as Nx
    case U_RSQRT: return inversesqrt(x);
#endif
    case U_IS_NAN: return isnan(x) ? T(1) : T(0);
    case U_IS_INF: return isinf(x) ? T(1) : T(0);
#endif
#if defined(CT_F32) && !defined(F64_MATH_OP)
    case U_EXP: return exp(x);
    case U_EXPM1: return nxv_expm1(x);
    case U_LOG: return log(x);
    case U_LOG1P: return nxv_log1p(x);
    case U_SIGMOID: return 1.0 / (1.0 + exp(-x));
    case U_SIN: return sin(x);
    case U_COS: return cos(x);
    case U_TAN: return tan(x);
    case U_SINH: return nxv_sinh(x);
    case U_COSH: return nxv_cosh(x);
    case U_TANH: return nxv_tanh(x);
    case U_ASIN: return nxv_asin(x);
    case U_ACOS: return nxv_acos(x);
    case U_ATAN: return nxv_atan(x);
    case U_ASINH: return nxv_asinh(x);
    case U_ACOSH: return nxv_acosh(x);
    case U_ATANH: return nxv_atanh(x);
    case U_CBRT: return nxv_cbrt(x);
    case U_ERF: return nxv_erf(x);
    case U_ERFC: return nxv_erfc(x);
    case U_ERF_INV: return nxv_erf_inv(x);
#endif
#if defined(F64_MATH_OP)
    // One f64 library function per module (build/shaders.rs): drivers inline every
    // function a module calls before specialising the op, so one module holding the
    // whole library made every f64 pipeline take seconds to build on lavapipe.
#if defined(CT_F64)
    case F64_MATH_OP: return F64_MATH_FN(x);
#else
    // f32 (and f16/bf16) through the f64 library, rounded once: Nx's results exactly
    // (Nx.BinaryBackend computes in double too), at any argument size.
    case F64_MATH_OP:
#if defined(EXP32)
    {
        // f32 results: the fast path where it proves its rounding (exp32.glsl).
        float y;
        [[dont_flatten]] if (((OPS >> 16) & 0xFFu) == TY_F32 && exp32_fast(x, y)) return y;
    }
#endif
        return f32_for_store(F64_MATH_FN(f32_widen(x)), (OPS >> 16) & 0xFFu);
#endif
#endif
#if defined(IS_INT)
#if defined(IS_SIGNED)
    case U_NEGATE: return -x;
    case U_ABS: return abs(x);
    case U_SIGN: return sign(x);
#else
    case U_NEGATE: return T(0) - x;
    case U_ABS: return x;
    case U_SIGN: return x == T(0) ? T(0) : T(1);
#endif
    case U_CEIL: case U_FLOOR: case U_ROUND: return x;
    case U_IS_NAN: case U_IS_INF: return T(0);
    case U_BNOT: return ~x;
#if defined(HAS_I64)
    case U_POPCNT: {
        uvec2 w = unpackUint2x32(uint64_t(x));
        if (bits < 64u) w = uvec2(w.x & ((1u << bits) - 1u), 0u);
        return T(bitCount(w.x) + bitCount(w.y));
    }
    case U_CLZ: {
        uvec2 w = unpackUint2x32(uint64_t(x));
        if (bits < 64u) {
            uint v = (bits == 32u) ? w.x : (w.x & ((1u << bits) - 1u));
            return T(v == 0u ? int(bits) : int(bits) - 1 - findMSB(v));
        }
        if (w.y != 0u) return T(31 - findMSB(w.y));
        return T(w.x == 0u ? 64 : 63 - findMSB(w.x));
    }
#else
    case U_POPCNT: {
        uint v = uint(x);
        if (bits < 32u) v &= (1u << bits) - 1u;
        return T(bitCount(v));
    }
    case U_CLZ: {
        uint v = uint(x);
        if (bits < 32u) v &= (1u << bits) - 1u;
        return T(v == 0u ? int(bits) : int(bits) - 1 - findMSB(v));
    }
#endif
#endif
    }
    return x;
}
