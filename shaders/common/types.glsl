// Shared by every compute kernel: element type codes, buffer references and typed
// load/store with conversion to and from the kernel's compute type T.
//
// Tensors live in buffers reached through buffer device addresses (passed as uvec2 in push
// constants), so a kernel has no descriptor sets and no maxStorageBufferRange limit.
//
// A kernel defines exactly one compute type before including this file:
//   CT_F32 (T = float), CT_I32 (int), CT_U32 (uint), CT_F64 (double),
//   CT_I64 (int64_t), CT_U64 (uint64_t).
// 8/16-bit element types use storage-only extensions: no 8/16-bit arithmetic is needed.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : enable
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : enable

#if defined(EXACT_VIA_F64)
#extension GL_ARB_gpu_shader_fp64 : enable
#endif

#if defined(F64_MATH_OP) || defined(FUSED) || defined(COMPLEX_MATH) || defined(EXACT_VIA_F64)
// [[dont_unroll]] in the f64 math library (shaders/common/math64*.glsl), [[dont_flatten]]
// in the f32 subnormal paths (math.glsl).
#extension GL_EXT_control_flow_attributes : enable
#endif

#if defined(CT_I64) || defined(CT_U64) || defined(CT_F64)
#define HAS_I64 1
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#endif

// Element type codes: keep in sync with `DType::code` in native/nx_vulkan/src/dtype.rs.
#define TY_U8 0u
#define TY_U16 1u
#define TY_U32 2u
#define TY_U64 3u
#define TY_S8 4u
#define TY_S16 5u
#define TY_S32 6u
#define TY_S64 7u
#define TY_F16 8u
#define TY_BF16 9u
#define TY_F32 10u
#define TY_F64 11u
#define TY_C64 12u
#define TY_C128 13u
#define TY_F8 14u
#define TY_F8E4M3FN 15u
// Sub-byte integers: one byte per element, signed ones sign-extended (loads read them as
// u8/s8); stores keep the low 2 or 4 bits, as Nx's bitstrings do.
#define TY_U2 16u
#define TY_U4 17u
#define TY_S2 18u
#define TY_S4 19u

// The byte a sub-byte integer type stores for the integer bits v (wrapped to its width).
uint sub_byte(uint ty, uint v) {
    if (ty == TY_U2) return v & 3u;
    if (ty == TY_U4) return v & 15u;
    if (ty == TY_S2) return uint(int(v << 30) >> 30) & 0xFFu;
    return uint(int(v << 28) >> 28) & 0xFFu;
}

layout(buffer_reference, std430, buffer_reference_align = 1) buffer BufU8 { uint8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer BufS8 { int8_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BufU16 { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer BufS16 { int16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer BufU32 { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) buffer BufU64 { uvec2 v[]; };

// CT_TY: the element type code whose storage is exactly T (for partial results).
#if defined(CT_F32)
#define CT_TY TY_F32
#elif defined(CT_F64)
#define CT_TY TY_F64
#elif defined(CT_I32)
#define CT_TY TY_S32
#elif defined(CT_U32)
#define CT_TY TY_U32
#elif defined(CT_I64)
#define CT_TY TY_S64
#elif defined(CT_U64)
#define CT_TY TY_U64
#endif

#if defined(CT_F32)
#define T float
#define IS_FLOAT 1
#elif defined(CT_F64)
#define T double
#define IS_FLOAT 1
#extension GL_ARB_gpu_shader_fp64 : enable
#elif defined(CT_I32)
#define T int
#define IS_INT 1
#define IS_SIGNED 1
#elif defined(CT_U32)
#define T uint
#define IS_INT 1
#elif defined(CT_I64)
#define T int64_t
#define IS_INT 1
#define IS_SIGNED 1
#elif defined(CT_U64)
#define T uint64_t
#define IS_INT 1
#else
#error "define one compute type CT_*"
#endif

// Ordered compares of two values of T that are not NaN (callers handle NaN first). The
// f32 ones go through the bits: NVIDIA's f32 compares flush subnormal operands to zero
// (1e-40 > 5e-41 is false there), which misordered max/min reductions, arg-reductions,
// window selections and sorts. -0 and +0 stay equal, as in IEEE compares.
#if defined(CT_F32)
int f32_order_key(float x) {
    int b = floatBitsToInt(x);
    return b ^ ((b >> 31) & 0x7FFFFFFF);
}
bool f32_both_zero(float a, float b) {
    return ((floatBitsToUint(a) | floatBitsToUint(b)) << 1) == 0u;
}
#define T_LESS(a, b) (f32_order_key(a) < f32_order_key(b) && !f32_both_zero(a, b))
#define T_EQUAL(a, b) (floatBitsToUint(a) == floatBitsToUint(b) || f32_both_zero(a, b))
#else
#define T_LESS(a, b) ((a) < (b))
#define T_EQUAL(a, b) ((a) == (b))
#endif

#include "bf16.glsl"

// f8 (E5M2): the top byte of an f16. Stores take the f16's top byte as Nx does (its
// lower bits dropped, not rounded); NaN is 0x7E.
float f8_to_f32(uint b) { return unpackHalf2x16(b << 8).x; }
uint f32_to_f8_bits(float f) {
    if (isnan(f)) return 0x7Eu;
    return (packHalf2x16(vec2(f, 0.0)) >> 8) & 0xFFu;
}

// f8_e4m3fn: sign, 4 exponent bits (bias 7), 3 mantissa bits; S.1111.111 is NaN and there
// are no infinities. Stores follow Nx.Floating.dump_f8_e4m3fn: clamp to +-448, mantissa
// rounded half away from zero and then clamped to 7 (no carry into the exponent).
float f8e4m3_to_f32(uint b) {
    uint e = (b >> 3) & 15u;
    uint m = b & 7u;
    float v;
    if (e == 15u && m == 7u) v = uintBitsToFloat(0x7FC00000u);
    else if (e == 0u) v = float(m) / 8.0 * exp2(-6.0);
    else v = (1.0 + float(m) / 8.0) * exp2(float(int(e) - 7));
    return (b & 0x80u) != 0u ? -v : v;
}
uint f32_to_f8e4m3_bits(float f) {
    if (isnan(f)) return 0x7Fu;
    uint sign = (floatBitsToUint(f) >> 31) << 7;
    float a = min(abs(f), 448.0);
    if (a == 0.0) return sign;
    int e;
    frexp(a, e);  // a = m * 2^e, m in [0.5, 1)
    int unbiased = e - 1;
    if (unbiased + 7 <= 0) return sign | min(7u, uint(floor(a * 512.0 + 0.5)));
    float significand = a * exp2(float(-unbiased));
    uint m = min(7u, uint(floor((significand - 1.0) * 8.0 + 0.5)));
    if (unbiased + 7 == 15 && m >= 7u) m = 6u;
    return sign | uint(unbiased + 7) << 3 | m;
}

// T's own storage, for kernels' fast paths when an operand's type is exactly CT_TY.
#if defined(HAS_I64)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer BufT { T v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 4) buffer BufT { T v[]; };
#endif

// Four T's as one 16-byte access, for 32-bit compute types (vectorised fast paths).
#if defined(CT_F32)
#define T4 vec4
#elif defined(CT_I32)
#define T4 ivec4
#elif defined(CT_U32)
#define T4 uvec4
#endif
#if defined(T4)
layout(buffer_reference, std430, buffer_reference_align = 16) buffer BufT4 { T4 v[]; };
#endif

#if defined(EXACT_VIA_F64) || defined(CT_F64)
// f32 <-> double with subnormals kept, for f64 kernels reading or writing f32 elements
// and the f32 modules of the math library: drivers that flush f32 subnormals (NVIDIA's)
// flush them in a plain conversion too, so these go through the bits.
double f32_bits_to_double(uint b) {
    // Zeros, normal, infinite or NaN: the plain conversion is exact.
    if ((b & 0x7F800000u) != 0u || (b & 0x7FFFFFu) == 0u) return double(uintBitsToFloat(b));
    double m = double(b & 0x7FFFFFu) * 1.401298464324817e-45lf;  // mantissa * 2^-149
    return (b >> 31) != 0u ? -m : m;
}

double f32_widen(float x) {
    return f32_bits_to_double(floatBitsToUint(x));
}

// The f32 bits nearest to r (ties to even), subnormals included.
uint double_to_f32_bits(double r) {
    if (!(abs(r) < 1.1754943508222875e-38lf)) return floatBitsToUint(float(r));  // normal, inf, NaN
    // A multiple of 2^-149, rounded to nearest even (2^23 of them is the least normal).
    uint m = uint(roundEven(abs(r) * 7.1362384635298e44lf));
    return ((unpackDouble2x32(r).y >> 31) << 31) | m;
}

float f32_narrow(double r) {
    return uintBitsToFloat(double_to_f32_bits(r));
}

// r rounded to f32 "to odd": toward zero, the last bit set when inexact. Rounded again to
// nearest even in a type with at least two bits fewer (f16, bf16), this gives r rounded
// once, as Nx rounds a double straight to f16; rounding to the nearest f32 first turns
// values just off an f16 tie into the tie.
float f32_round_odd(double r) {
    uint b = double_to_f32_bits(r);
    double back = f32_bits_to_double(b);
    if (isnan(r) || back == r) return uintBitsToFloat(b);
    if (abs(back) > abs(r)) b -= 1u;  // rounded away from zero: its neighbour toward it
    return uintBitsToFloat(b | 1u);
}

// A double result as the f32 a store of type `out_ty` takes: the nearest one, or for an
// f16 output one rounded to odd, so that the store's rounding is the only one.
float f32_for_store(double r, uint out_ty) {
    // (bf16 takes the nearest f32's top half, as Nx: see bf16.glsl.)
    return out_ty == TY_F16 ? f32_round_odd(r) : f32_narrow(r);
}
#endif

// Compute-type value of a float element, truncated toward zero for integer compute types.
T from_f32(float f) {
#if defined(IS_FLOAT)
    return T(f);
#endif
    // Infinities saturate to the compute type's range (Nx: as_type(inf, :s32) = 2^31-1).
#if defined(CT_I32)
    if (isinf(f)) return f > 0.0 ? 0x7FFFFFFF : int(0x80000000u);
#elif defined(CT_U32)
    if (isinf(f)) return f > 0.0 ? 0xFFFFFFFFu : 0u;
#elif defined(CT_I64)
    if (isinf(f)) return f > 0.0 ? int64_t(0x7FFFFFFFFFFFFFFFul) : int64_t(0x8000000000000000ul);
#elif defined(CT_U64)
    if (isinf(f)) return f > 0.0 ? 0xFFFFFFFFFFFFFFFFul : 0ul;
#endif
#if defined(IS_FLOAT)
#elif defined(HAS_I64)
    return isnan(f) ? T(0) : T(int64_t(f));
#elif defined(IS_SIGNED)
    return isnan(f) ? 0 : int(f);
#else
    // NaN becomes 0 (Nx); negative values wrap through int.
    return isnan(f) ? 0u : (f <= -1.0 ? uint(int(f)) : uint(f));
#endif
}

T load_elem(uvec2 addr, uint ty, uint i) {
    switch (ty) {
    case TY_U8: case TY_U2: case TY_U4: return T(uint(BufU8(addr).v[i]));
    case TY_S8: case TY_S2: case TY_S4: return T(int(BufS8(addr).v[i]));
    case TY_U16: return T(uint(BufU16(addr).v[i]));
    case TY_S16: return T(int(BufS16(addr).v[i]));
    case TY_U32: return T(BufU32(addr).v[i]);
    case TY_S32: return T(int(BufU32(addr).v[i]));
    case TY_F16: return from_f32(unpackHalf2x16(uint(BufU16(addr).v[i])).x);
    case TY_BF16: return from_f32(uintBitsToFloat(uint(BufU16(addr).v[i]) << 16));
    case TY_F8: return from_f32(f8_to_f32(uint(BufU8(addr).v[i])));
    case TY_F8E4M3FN: return from_f32(f8e4m3_to_f32(uint(BufU8(addr).v[i])));
#if defined(CT_F64)
    case TY_F32: return f32_bits_to_double(BufU32(addr).v[i]);
#else
    case TY_F32: return from_f32(uintBitsToFloat(BufU32(addr).v[i]));
#endif
#if defined(HAS_I64)
    case TY_U64: return T(packUint2x32(BufU64(addr).v[i]));
    case TY_S64: return T(int64_t(packUint2x32(BufU64(addr).v[i])));
#endif
#if defined(CT_F64)
    case TY_F64: return T(packDouble2x32(BufU64(addr).v[i]));
#endif
    }
    return T(0);
}

// Two's-complement bits of an integer-valued compute value (wrapping), as the store of an
// integer element type needs them.
#if defined(HAS_I64)
#if defined(IS_FLOAT)
uint64_t int_bits64(T v) { return isnan(v) ? 0ul : uint64_t(int64_t(v)); }
#else
uint64_t int_bits64(T v) { return uint64_t(v); }
#endif
uint int_bits(T v) { return uint(int_bits64(v)); }
#else
#if defined(IS_FLOAT)
// Through uint for [2^31, 2^32) (u32 and narrower unsigned results of large floats, as
// Nx wraps them), through int below.
uint int_bits(T v) { return isnan(v) ? 0u : (v >= T(2147483648.0) ? uint(v) : uint(int(v))); }
#else
uint int_bits(T v) { return uint(v); }
#endif
#endif

// The bits of an integer type's largest (or smallest) value: where infinities land.
void store_saturated(uvec2 addr, uint ty, uint i, bool high) {
    switch (ty) {
    case TY_U8: BufU8(addr).v[i] = uint8_t(high ? 0xFFu : 0u); return;
    case TY_S8: BufU8(addr).v[i] = uint8_t(high ? 0x7Fu : 0x80u); return;
    case TY_U2: BufU8(addr).v[i] = uint8_t(high ? 3u : 0u); return;
    case TY_U4: BufU8(addr).v[i] = uint8_t(high ? 15u : 0u); return;
    case TY_S2: BufU8(addr).v[i] = uint8_t(high ? 1u : 0xFEu); return;
    case TY_S4: BufU8(addr).v[i] = uint8_t(high ? 7u : 0xF8u); return;
    case TY_U16: BufU16(addr).v[i] = uint16_t(high ? 0xFFFFu : 0u); return;
    case TY_S16: BufU16(addr).v[i] = uint16_t(high ? 0x7FFFu : 0x8000u); return;
    case TY_U32: BufU32(addr).v[i] = high ? 0xFFFFFFFFu : 0u; return;
    case TY_S32: BufU32(addr).v[i] = high ? 0x7FFFFFFFu : 0x80000000u; return;
    case TY_U64: BufU64(addr).v[i] = high ? uvec2(0xFFFFFFFFu) : uvec2(0u); return;
    case TY_S64: BufU64(addr).v[i] = high ? uvec2(0xFFFFFFFFu, 0x7FFFFFFFu) : uvec2(0u, 0x80000000u); return;
    }
}

void store_elem(uvec2 addr, uint ty, uint i, T v) {
#if defined(IS_FLOAT)
    // NaN has one pattern in Nx (the positive quiet NaN of each type), whatever produced
    // it: hardware gives others (x86's inf - inf is negative).
    if (isnan(v)) {
        switch (ty) {
        case TY_F16: BufU16(addr).v[i] = uint16_t(0x7E00u); return;
        case TY_BF16: BufU16(addr).v[i] = uint16_t(0x7FC0u); return;
        case TY_F32: BufU32(addr).v[i] = 0x7FC00000u; return;
#if defined(CT_F64)
        case TY_F64: BufU64(addr).v[i] = uvec2(0u, 0x7FF80000u); return;
#endif
        }
    }
    if (isinf(v) && ty != TY_F16 && ty != TY_BF16 && ty != TY_F32 && ty != TY_F64 && ty != TY_F8 &&
        ty != TY_F8E4M3FN) {
        store_saturated(addr, ty, i, v > T(0));
        return;
    }
#endif
    switch (ty) {
    case TY_U8: case TY_S8: BufU8(addr).v[i] = uint8_t(int_bits(v) & 0xFFu); return;
    case TY_U2: case TY_U4: case TY_S2: case TY_S4: BufU8(addr).v[i] = uint8_t(sub_byte(ty, int_bits(v))); return;
    case TY_U16: case TY_S16: BufU16(addr).v[i] = uint16_t(int_bits(v) & 0xFFFFu); return;
    case TY_U32: case TY_S32: BufU32(addr).v[i] = int_bits(v); return;
#if defined(CT_F64)
    // Through f32 rounded to odd: one rounding from the double, as Nx does.
    case TY_F16: BufU16(addr).v[i] = uint16_t(packHalf2x16(vec2(f32_round_odd(v), 0.0)) & 0xFFFFu); return;
    // bf16: the nearest f32, then its top half, as Nx.BinaryBackend stores a double.
    case TY_BF16: BufU16(addr).v[i] = uint16_t(f32_to_bf16_bits(f32_narrow(v))); return;
#else
    case TY_F16: BufU16(addr).v[i] = uint16_t(packHalf2x16(vec2(float(v), 0.0)) & 0xFFFFu); return;
    case TY_BF16: BufU16(addr).v[i] = uint16_t(f32_to_bf16_bits(float(v))); return;
#endif
    case TY_F8: BufU8(addr).v[i] = uint8_t(f32_to_f8_bits(float(v))); return;
    case TY_F8E4M3FN: BufU8(addr).v[i] = uint8_t(f32_to_f8e4m3_bits(float(v))); return;
#if defined(CT_F64)
    case TY_F32: BufU32(addr).v[i] = double_to_f32_bits(v); return;
#else
    case TY_F32: BufU32(addr).v[i] = floatBitsToUint(float(v)); return;
#endif
#if defined(HAS_I64)
    case TY_U64: case TY_S64: BufU64(addr).v[i] = unpackUint2x32(int_bits64(v)); return;
#endif
#if defined(CT_F64)
    case TY_F64: BufU64(addr).v[i] = unpackDouble2x32(double(v)); return;
#endif
    }
}


// Grid-stride helpers: kernels are launched with at most 65535 groups per axis and loop.
// Macros, not functions: a function here would be compiled before the kernel declares its
// `local_size_x`, and glslang folds gl_WorkGroupSize to (1, 1, 1) there, which made every
// invocation walk 1/256 of the stride (each element written 256 times).
#define global_index() \
    (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x)
#define global_threads() (gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x)

// Offset of output element `i` (row-major over `dims`) in an input with element `strides`.
#define MAX_RANK 6
