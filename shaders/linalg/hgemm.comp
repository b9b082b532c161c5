#version 460
// f16 and bf16 matmul on tensor cores: C[b] = A[b] (M x K) * B[b] (K x N), row-major,
// contiguous, f16 operands (bf16 with BF16), products accumulated in f32 (exact products,
// f32 sums, as cuBLAS does by default), the result rounded once to C's type (f16 with
// OUT_F16, bf16 with OUT_BF16, else f32: the partial sums of a split K). NVIDIA's driver
// converts an f32 cooperative matrix to bf16 by truncation, not to nearest even
// (tests/dot.rs `half_results_are_their_f32_sums_rounded_once` caught it on the H200), so
// OUT_BF16 first rounds each sum to nearest even in f32, after which the conversion is
// exact: bf16 4096 at 258 TFLOP/s, against 232 with the f32 sums rounded by a separate
// pass (raw nvidia-h200-2026-12-01zg). Through
// VK_KHR_cooperative_matrix: 16x16x16 products with f32 accumulators (bf16 ones need
// VK_KHR_shader_bfloat16).
//
// 2 x WARPS_N subgroups of 32 (each 64 x WN of the tile: 4 x WN/16 accumulators) per
// 128 x (WARPS_N WN) output tile, K advancing BK = 32 at a time through two shared-memory
// stages, one barrier per step (and one after the prologue). Modules: WARPS_N = 4 with WN = 32 (128x128 tiles, 256
// threads), and the "wide" ones, WARPS_N = 2 with WN = 64 (128x128 tiles of four 64x64
// subgroups, 128 threads, 37 KiB of shared memory, so two workgroups share an SM). Global
// loads run two steps ahead of the products (see the K loop). Every loop is [[unroll]]:
// left as loops, the accumulator arrays went to memory and the kernel ran 4x slower on an
// H200. Shapes: M and N multiples of 128, K of 32, 16-byte aligned operands (`hgemm_fits`
// in native/nx_vulkan/src/ops/dot.rs). On the H200 the wide modules run f16 4096 at
// 292-298 TFLOP/s and bf16 at 296-302 (raw nvidia-h200-2026-12-02j). Before the shared
// stores were free of bank conflicts and the barrier sat mid-step: f16 281-284, bf16
// 268-272; before the loads ran two steps ahead, f16 255-260. Other shapes, f16: 248-251
// with eight 64x64 subgroups on 128x256 tiles and one stage; two stages of K 16 there:
// 134; B fragments loaded straight from global memory, on the NV extension: 57-62. The
// driver's code for it (NX_VULKAN_PIPELINE_DUMP, DEVELOPERS.md) is HMMA.16816.F32 fed by
// LDSM.16.M88.4 (A) and LDSM.16.MT88.4 (B): 64 products, 16 fragment loads, 8 global loads
// and 8 shared stores per subgroup and step.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#ifdef BF16
#extension GL_EXT_bfloat16 : require
#endif
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_control_flow_attributes : require

// Subgroups per workgroup: 2 x WARPS_N (4 unless the module says otherwise).
#ifndef WARPS_N
#define WARPS_N 4
#endif
#define THREADS (64 * WARPS_N)
layout(local_size_x = THREADS) in;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Quads { uvec4 v[]; };
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

#define BM 128
#ifndef WN
#define WN 32
#endif
// K step: two halves of 16, one cooperative-matrix product deep each (the K loop).
#define BK 32
// Subgroups in a 2 x WARPS_N grid, each WM x WN of the tile.
#define WM 64
#define BN (WARPS_N * WN)
#define TM (WM / 16)
#define TN (WN / 16)
// Quads (uvec4: 8 halves) each thread moves per stage, of A and of B.
#define LA (BM * BK / 8 / THREADS)
#define LB (BK * BN / 8 / THREADS)
// Shared rows in quads, one quad of padding against bank conflicts.
#define AS (BK / 8 + 1)
#define BS (BN / 8 + 1)
shared uvec4 as_[2 * BM * AS];
shared uvec4 bs_[2 * BK * BS];

#ifdef BF16
#define ELEM bfloat16_t
#else
#define ELEM float16_t
#endif
#define AM coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BM_ coopmat<ELEM, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#define F32M coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define F16M coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define ROW_MAJOR gl_CooperativeMatrixLayoutRowMajor

#ifdef OUT_BF16
#include "../common/bf16.glsl"
#define BF16M coopmat<bfloat16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
// The f32 value of `x` as the bf16 Nx stores (its top half; see bf16.glsl): its low 16
// bits are zero, so the driver's f32 -> bf16 conversion is exact on it, whatever its
// rounding.
float round_to_bf16(const float x) {
    return uintBitsToFloat(f32_to_bf16_bits(x) << 16);
}
#endif

void main() {
    const uint lid = gl_LocalInvocationID.x;
    const uint warp = gl_SubgroupID;
    const uint batch = gl_WorkGroupID.z;
    const uint row0 = gl_WorkGroupID.y * BM;
    const uint col0 = gl_WorkGroupID.x * BN;
    const uint k8 = pc.k / 8u;
    const uint n8 = pc.n / 8u;
    Quads a = Quads(pc.a_addr);
    Quads b = Quads(pc.b_addr);
    const uint a_base = batch * pc.m * k8;
    const uint b_base = batch * pc.k * n8;

    // Loader roles: quad e = lid + THREADS l of the A tile (row, quad) and of the B tile
    // (k row e / (BN / 8), quad e % (BN / 8)). A 128-bit shared store runs in four
    // phases of eight invocations, so each eight must hit eight different 16-byte bank
    // groups: in the A tile (rows of AS = 5 quads) eight invocations take rows r and r + 4
    // (5 x 4 = 20 = 4 mod 8 quads apart), four quads each, still reading two whole 64-byte
    // runs of global memory. Consecutive rows collide (rows r and r + 1 start 5 quads
    // apart, so row r's quad 0 and row r + 1's quad 3 share a bank group), as the earlier
    // mapping's did; taking quad 0 of eight consecutive rows avoids that but reads 16
    // bytes of each row from global memory, and ran a quarter slower (raw
    // nvidia-h200-2026-12-02j, call 2).
    uint ia[LA], ib[LB];
    uint a_st[LA], b_st[LB];
    [[unroll]] for (uint l = 0u; l < LA; l++) {
        const uint e = lid + THREADS * l;
        const uint row = (e / 32u) * 8u + (e % 32u) / 8u + 4u * ((e % 8u) / 4u);
        const uint q = e % 4u;
        ia[l] = a_base + (row0 + row) * k8 + pc.k_begin / 8u + q;
        a_st[l] = row * AS + q;
    }
    [[unroll]] for (uint l = 0u; l < LB; l++) {
        const uint e = lid + THREADS * l;
        const uint kr = e / (BN / 8);
        const uint q = e % (BN / 8);
        ib[l] = b_base + (pc.k_begin + kr) * n8 + col0 / 8u + q;
        b_st[l] = kr * BS + q;
    }

    // This subgroup's part of the tile: rows wr * WM.., columns wc * WN...
    const uint wr = warp / WARPS_N;
    const uint wc = warp % WARPS_N;
    F32M acc[TM][TN];
    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] = F32M(0.0);
    if (pc.accumulate != 0u) {
        Floats c = Floats(pc.c_addr);
        [[unroll]] for (uint i = 0u; i < TM; i++)
            [[unroll]] for (uint j = 0u; j < TN; j++) {
                const uint r = row0 + wr * WM + i * 16u;
                const uint col = col0 + wc * WN + j * 16u;
                coopMatLoad(acc[i][j], c.v, batch * pc.m * pc.n + r * pc.n + col, pc.n, ROW_MAJOR);
            }
    }

    // Step s multiplies stage s & 1. Its operands were loaded into registers during step
    // s - 2 and stored during step s - 1, after that step's first fragment loads (steps 0
    // and 1: by the prologue): the stores wait on loads issued a whole step earlier.
    // (Stored at the end of the step that loaded them, the driver moved the stores up
    // among that step's products, to free registers, and each subgroup stalled there on
    // its global loads: raw nvidia-h200-2026-12-02f.)
    uvec4 va[LA], vb[LB];
    const uint steps = (pc.k_end - pc.k_begin) / BK;
    const uint b_step = BK * n8;
#define LOAD_STEP(S)                                                                            \
    {                                                                                           \
        [[unroll]] for (uint l = 0u; l < LA; l++) va[l] = a.v[ia[l] + (S) * (BK / 8u)];         \
        [[unroll]] for (uint l = 0u; l < LB; l++) vb[l] = b.v[ib[l] + (S) * b_step];            \
    }
#define STORE_STAGE(ST)                                                                         \
    {                                                                                           \
        [[unroll]] for (uint l = 0u; l < LA; l++) as_[(ST) * BM * AS + a_st[l]] = va[l];        \
        [[unroll]] for (uint l = 0u; l < LB; l++) bs_[(ST) * BK * BS + b_st[l]] = vb[l];        \
    }
#define FRAGMENTS(ST, KK, FA, FB)                                                               \
    {                                                                                           \
        [[unroll]] for (uint i = 0u; i < TM; i++)                                               \
            coopMatLoad(FA[i], as_, (ST) * BM * AS + (wr * WM + i * 16u) * AS + (KK) / 8u, AS, ROW_MAJOR); \
        [[unroll]] for (uint j = 0u; j < TN; j++)                                               \
            coopMatLoad(FB[j], bs_, (ST) * BK * BS + (KK) * BS + (wc * WN + j * 16u) / 8u, BS, ROW_MAJOR); \
    }
#define PRODUCTS(FA, FB)                                                                        \
    [[unroll]] for (uint i = 0u; i < TM; i++)                                                   \
        [[unroll]] for (uint j = 0u; j < TN; j++) acc[i][j] = coopMatMulAdd(FA[i], FB[j], acc[i][j]);
    LOAD_STEP(0u);
    STORE_STAGE(0u);
    if (steps > 1u) LOAD_STEP(1u);
    // Each step: the fragments of its first half (K 0..15) from stage s & 1; the stores
    // of step s + 1's operands into the other stage (last read in step s - 1, before the
    // previous barrier) and the loads for step s + 2; the first half's products; the
    // second half's fragments; the barrier; the second half's products. Those have their
    // operands in registers, so each subgroup's tensor work spans the barrier instead of
    // waiting behind it, and the stores reach shared memory while the first half's
    // products run (bf16 4096: 283-287 -> 299-302 TFLOP/s, raw nvidia-h200-2026-12-02j).
    // One barrier per step still orders everything: a stage is written only after the
    // barrier that follows every subgroup's last read of it, and read only after the
    // barrier that follows its stores.
    barrier();
    for (uint s = 0u; s < steps; s++) {
        const uint st = s & 1u;
        AM fa0[TM], fa1[TM];
        BM_ fb0[TN], fb1[TN];
        FRAGMENTS(st, 0u, fa0, fb0);
        if (s + 1u < steps) {
            STORE_STAGE(st ^ 1u);
            if (s + 2u < steps) LOAD_STEP(s + 2u);
        }
        PRODUCTS(fa0, fb0);
        FRAGMENTS(st, BK / 2u, fa1, fb1);
        barrier();
        PRODUCTS(fa1, fb1);
    }

    [[unroll]] for (uint i = 0u; i < TM; i++)
        [[unroll]] for (uint j = 0u; j < TN; j++) {
            const uint r = row0 + wr * WM + i * 16u;
            const uint col = col0 + wc * WN + j * 16u;
            const uint at = batch * pc.m * pc.n + r * pc.n + col;
#if defined(OUT_F16)
            F16M h = F16M(acc[i][j]);
            coopMatStore(h, Halves(pc.c_addr).v, at, pc.n, ROW_MAJOR);
#elif defined(OUT_BF16)
            [[unroll]] for (int e = 0; e < acc[i][j].length(); e++) acc[i][j][e] = round_to_bf16(acc[i][j][e]);
            BF16M h = BF16M(acc[i][j]);
            coopMatStore(h, Shorts(pc.c_addr).v, at, pc.n, ROW_MAJOR);
#else
            coopMatStore(acc[i][j], Floats(pc.c_addr).v, at, pc.n, ROW_MAJOR);
#endif
        }
}
