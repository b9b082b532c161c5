#version 460
// f16 and bf16 matmul on NVIDIA's workgroup-scope cooperative matrices
// (VK_NV_cooperative_matrix2): C[b] = A[b] (M x K) * B[b] (K x N), row-major, contiguous,
// products accumulated in f32 and rounded once to C's type (f16 with OUT_F16, bf16 with
// OUT_BF16, else f32: the partial sums of a split K). The same products and push
// constants as hgemm.comp; the driver stages the operands through shared memory itself
// (tensor-addressed loads of whole BM x BK and BK x BN workgroup tiles), where
// hgemm.comp does it by hand for subgroup-scope 16x16 matrices.
//
// bf16 results: NVIDIA's driver converts an f32 matrix to bf16 by truncation, so each
// sum is first rounded to nearest even in f32 (its low 16 bits cleared), after which any
// conversion is exact (tests/dot.rs `half_results_are_their_f32_sums_rounded_once`).
//
// Shapes: M multiple of BM, N of BN, K of BK (`hgemm_fits` in native/nx_vulkan/src/ops/
// dot.rs). INTERFACE_ONLY builds the module vulkano reflects (kernels/spirv.rs): the same
// push constants and workgroup size, none of the extension's instructions, which
// vulkano 0.35's SPIR-V grammar predates.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_EXT_control_flow_attributes : require
#ifndef INTERFACE_ONLY
#extension GL_NV_cooperative_matrix2 : require
#endif
#if defined(BF16) && !defined(INTERFACE_ONLY)
#extension GL_EXT_bfloat16 : require
#endif

#ifndef THREADS
#define THREADS 256
#endif
layout(local_size_x = THREADS) in;

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 32
#endif
// K steps per iteration of the main loop (unrolled, so the driver can issue the next
// step's loads before this one's products).
#ifndef UNROLL
#define UNROLL 1
#endif

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Halves { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Shorts { uint16_t v[]; };

// Same push layout as matmul.comp (see `dot` in native/nx_vulkan/src/ops/dot.rs).
layout(push_constant) uniform Params {
    uvec2 c_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint m;
    uint n;
    uint k;
    uint k_begin;
    uint k_end;
    uint accumulate;
} pc;

#ifdef INTERFACE_ONLY
void main() {
    // Reads every push constant, so the block stays in the module's interface.
    if (pc.accumulate == 7u)
        Floats(pc.c_addr).v[0] = float(pc.a_addr.x + pc.b_addr.x + pc.m + pc.n + pc.k + pc.k_begin + pc.k_end);
}
#else

#ifdef BF16
#define ELEM bfloat16_t
#define OPERANDS Shorts
#else
#define ELEM float16_t
#define OPERANDS Halves
#endif
#define ACC coopmat<float, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

// The f32 value nearest `x` whose low 16 bits are zero, ties to even (NaN stays NaN).
float round_to_bf16(const in uint row, const in uint col, const in float x) {
    if (isnan(x)) return x;
    const uint u = floatBitsToUint(x);
    return uintBitsToFloat((u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u);
}

void main() {
    const uint batch = gl_WorkGroupID.z;
    const uint row0 = gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;

    tensorLayoutNV<2> la = createTensorLayoutNV(2);
    tensorLayoutNV<2> lb = createTensorLayoutNV(2);
    tensorLayoutNV<2> lc = createTensorLayoutNV(2);
    la = setTensorLayoutDimensionNV(la, pc.m, pc.k);
    lb = setTensorLayoutDimensionNV(lb, pc.k, pc.n);
    lc = setTensorLayoutDimensionNV(lc, pc.m, pc.n);
    la = setTensorLayoutStrideNV(la, pc.k, 1);
    lb = setTensorLayoutStrideNV(lb, pc.n, 1);
    lc = setTensorLayoutStrideNV(lc, pc.n, 1);

    const uint a_at = batch * pc.m * pc.k;
    const uint b_at = batch * pc.k * pc.n;
    const uint c_at = batch * pc.m * pc.n;
    OPERANDS a = OPERANDS(pc.a_addr);
    OPERANDS b = OPERANDS(pc.b_addr);

    ACC acc = ACC(0.0);
    if (pc.accumulate != 0u)
        coopMatLoadTensorNV(acc, Floats(pc.c_addr).v, c_at, sliceTensorLayoutNV(lc, row0, BM, col0, BN));

    uint kk = pc.k_begin;
    for (; kk + UNROLL * BK <= pc.k_end; kk += UNROLL * BK) {
        [[unroll]] for (uint u = 0u; u < UNROLL; u++) {
            coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;
            coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;
            coopMatLoadTensorNV(fa, a.v, a_at, sliceTensorLayoutNV(la, row0, BM, kk + u * BK, BK));
            coopMatLoadTensorNV(fb, b.v, b_at, sliceTensorLayoutNV(lb, kk + u * BK, BK, col0, BN));
            acc = coopMatMulAdd(fa, fb, acc);
        }
    }
    for (; kk < pc.k_end; kk += BK) {
        coopmat<ELEM, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> fa;
        coopmat<ELEM, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> fb;
        coopMatLoadTensorNV(fa, a.v, a_at, sliceTensorLayoutNV(la, row0, BM, kk, BK));
        coopMatLoadTensorNV(fb, b.v, b_at, sliceTensorLayoutNV(lb, kk, BK, col0, BN));
        acc = coopMatMulAdd(fa, fb, acc);
    }

#if defined(OUT_F16)
    coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h = coopmat<float16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(acc);
    coopMatStoreTensorNV(h, Halves(pc.c_addr).v, c_at, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#elif defined(OUT_BF16)
    ACC rounded;
    coopMatPerElementNV(rounded, acc, round_to_bf16);
    coopmat<bfloat16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator> h = coopmat<bfloat16_t, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>(rounded);
    coopMatStoreTensorNV(h, Shorts(pc.c_addr).v, c_at, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#else
    coopMatStoreTensorNV(acc, Floats(pc.c_addr).v, c_at, sliceTensorLayoutNV(lc, row0, BM, col0, BN));
#endif
}
#endif
