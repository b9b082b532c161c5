#version 460
// Register-blocked f32 matmul C[b] = A[b] (M x K) * B[b] (K x N), row-major, contiguous.
// The fast path of `dot` for f32 operands whose K and N are multiples of 4 and whose
// buffers are 16-byte aligned: every global access is a vec4. With A_KMAJOR, A is stored
// k-major (K x M, a transposed operand read in place, M a multiple of 4): its vec4s run
// along M and land in shared memory as they are, as B's do.
//
// 128x128 output tile per workgroup of 128 threads, each thread 16x8 outputs in registers
// (four 4-row groups 32 rows apart by two 4-column groups 64 apart, so shared-memory reads
// are conflict-free vec4 broadcasts): 212 registers (231 in the exact-tile module), two
// workgroups per SM. Per k a thread loads 6 vec4 from shared memory for 128 fma; the k
// loop is unrolled, so the driver loads the next k's fragments during this one's products. K advances BK (8) at a
// time through two shared-memory stages: the next stage is loaded into registers while
// this one is multiplied, one barrier per step. Accumulation is in f32 with fma, as
// cuBLAS does without TF32. On the H200 (raw nvidia-h200-2026-12-02f, call 4), 4096 runs
// at 40.3-40.9 TFLOP/s and 8192 at 43.8, where the earlier kernel (256 threads of 8x8
// outputs at 125 registers, its k loop left rolled: unrolled it crossed the 128 registers
// that two such workgroups allow) ran 38.0-38.1 and 40.3; BK 16 here: 36.6-36.8 and 38.5.
//
// Exact tiles (EXACT_VIA_F64: the module for devices with f64 that do not promise to keep
// f32 subnormals, NVIDIA's among them). Such a driver loses products of subnormal operands
// and fma results below 2^-126 (its fma is FFMA.FTZ). Each workgroup proves from the
// values it loads that neither can happen in its tile: if no A value of its rows and no B
// value of its columns is subnormal, and the exponent fields of the least nonzero ones add
// up to >= 174, every product is a multiple of 2^-126, so is every partial sum, and no fma
// result is subnormal: the f32 result stands, bit for bit what a device that keeps
// subnormals computes. A tile without that proof is recomputed in f64 from the operands'
// bits (exact products, one rounding) by the same workgroup: no host wait, no other
// launch. Each thread keeps the least keys of the values it loaded in two registers,
// folded as it stores them to shared memory, and the workgroup combines them once after
// the K loop. (Folded per stage through subgroup minima into shared memory, the proof cost
// this kernel 10% at 4096: 36.2-36.6 TFLOP/s, raw nvidia-h200-2026-12-02f call 4; the
// earlier kernel could not spare the two registers.)
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_control_flow_attributes : require
#if defined(EXACT_VIA_F64)
#include "../common/types.glsl"
#endif

#define THREADS 128
layout(local_size_x = THREADS) in;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4s { vec4 v[]; };

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
    uint flags;
} pc;

// Bits of `flags` (ops/dot.rs: `Layout`): add C's current value (split K); A stored
// k-major (set with A_KMAJOR only).
#define FLAG_ACCUMULATE 1u
#define FLAG_A_KMAJOR 2u

#if defined(EXACT_VIA_F64)
// The least magnitude keys of the tile's A values ([0]) and B values ([1]); [0] is set to
// 0 where an earlier K range's sum could flush when added (split K).
shared uint least_keys[2];

// An f32's magnitude key: 2 |bits| - 2, so zeros (either sign) wrap to the top and the
// least key of a set of values is that of its least nonzero magnitude.
uint magnitude_key(float x) {
    return (floatBitsToUint(x) << 1) - 2u;
}

uint least_key4(vec4 v) {
    return min(min(magnitude_key(v.x), magnitude_key(v.y)), min(magnitude_key(v.z), magnitude_key(v.w)));
}

// The exponent field of the least nonzero magnitude (0: a subnormal; 255: none).
uint least_exponent(uint key) {
    return key >= 0xFFFFFFFEu ? 255u : (key + 2u) >> 24;
}

bool any_subnormal(vec4 v) {
    return any(lessThan((floatBitsToUint(v) & 0x7FFFFFFFu) - 1u, uvec4(0x007FFFFFu)));
}

// x + y may have flushed: y subnormal, or a zero sum of a nonzero y (x is never subnormal:
// it is a proven tile's sum).
bool add_may_flush(vec4 sum, vec4 y) {
    const uvec4 s = floatBitsToUint(sum) & 0x7FFFFFFFu, b = floatBitsToUint(y) & 0x7FFFFFFFu;
    const uvec4 zero_of_nonzero = uvec4(equal(s, uvec4(0u))) & uvec4(notEqual(b, uvec4(0u)));
    return any_subnormal(y) || any(notEqual(zero_of_nonzero, uvec4(0u)));
}

dvec4 widen4(vec4 v) {
    const uvec4 w = floatBitsToUint(v);
    return dvec4(f32_bits_to_double(w.x), f32_bits_to_double(w.y), f32_bits_to_double(w.z),
                 f32_bits_to_double(w.w));
}

vec4 narrow4(dvec4 d) {
    return uintBitsToFloat(uvec4(double_to_f32_bits(d.x), double_to_f32_bits(d.y),
                                 double_to_f32_bits(d.z), double_to_f32_bits(d.w)));
}
#endif

#define BM 128
#define BN 128
#ifndef BK
#define BK 8
#endif
// Row groups (4 rows each, 32 apart) and column groups (4 columns each, 64 apart) of a
// thread's outputs.
#define PR 4
#define QC 2
// vec4 loads per thread per stage, for each of A and B.
#define LOADS (BK * 32 / THREADS)
// A is stored transposed (k-major) so a thread reads its rows as vec4; one vec4 of
// padding per k row makes the transposing stores conflict-free.
shared vec4 as4[2][BK][BM / 4 + 1];
shared vec4 bs4[2][BK][BN / 4];

void main() {
    const uint lid = gl_LocalInvocationID.x;
    const uint batch = gl_WorkGroupID.z;
    const uint row0 = gl_WorkGroupID.y * BM;
    const uint col0_4 = gl_WorkGroupID.x * (BN / 4);
    const uint k4 = pc.k / 4u;
    const uint n4 = pc.n / 4u;
    Vec4s a = Vec4s(pc.a_addr);
    Vec4s b = Vec4s(pc.b_addr);
    Vec4s c = Vec4s(pc.c_addr);
#if defined(A_KMAJOR)
    const uint m4 = pc.m / 4u;
    const uint a_base = batch * pc.k * m4;
#else
    const uint a_base = batch * pc.m * k4;
#endif
    const uint b_base = batch * pc.k * n4;
    const uint c_base = batch * pc.m * n4;

    // Loader roles, per load l: A tile 128 rows x BK k (row e/(BK/4), k quad e%(BK/4));
    // B tile BK k x 128 columns (k e/32, column quad e%32); e = lid + THREADS l, so load l's
    // row and k are load 0's plus a constant step.
    // With A_KMAJOR, A's loaders mirror B's: k e/32, row quad e%32.
    const uint b_k0 = lid >> 5, b_c40 = lid & 31u;
    const bool b_col_in = col0_4 + b_c40 < n4;
#define B_K(l) (b_k0 + (THREADS / 32) * (l))
#if defined(A_KMAJOR)
    const bool a_row_in = row0 / 4u + b_c40 < m4;
#define LOAD_A(l, K0)                                                                           \
    va[l] = (a_row_in && (K0) + B_K(l) < pc.k_end)                                              \
        ? a.v[a_base + ((K0) + B_K(l)) * m4 + row0 / 4u + b_c40] : vec4(0.0);
#define STORE_A(S, l) as4[S][B_K(l)][b_c40] = va[l];
#else
    const uint a_row0 = lid / (BK / 4), a_kq0 = (lid % (BK / 4)) * 4u;
#define A_ROW(l) (a_row0 + (THREADS / (BK / 4)) * (l))
#define LOAD_A(l, K0)                                                                           \
    va[l] = (row0 + A_ROW(l) < pc.m && (K0) + a_kq0 < pc.k_end)                                 \
        ? a.v[a_base + (row0 + A_ROW(l)) * k4 + ((K0) + a_kq0) / 4u] : vec4(0.0);
#define STORE_A(S, l)                                                                           \
    {                                                                                           \
        const uint r = A_ROW(l);                                                                \
        as4[S][a_kq0 + 0u][r >> 2][r & 3u] = va[l].x;                                           \
        as4[S][a_kq0 + 1u][r >> 2][r & 3u] = va[l].y;                                           \
        as4[S][a_kq0 + 2u][r >> 2][r & 3u] = va[l].z;                                           \
        as4[S][a_kq0 + 3u][r >> 2][r & 3u] = va[l].w;                                           \
    }
#endif

    // Compute roles: rows p*32 + ty*4.., columns q*64 + tx*4... A warp covers 4 rows by 8
    // columns of threads: its reads of B's fragments are 8 distinct vec4s, one
    // shared-memory wavefront.
    const uint lane = lid & 31u, warp = lid >> 5;
    const uint tx = (warp & 1u) * 8u + (lane & 7u);
    const uint ty = (warp >> 1) * 4u + (lane >> 3);

    vec4 acc[PR][QC][4];
    [[unroll]] for (int p = 0; p < PR; p++)
        [[unroll]] for (int q = 0; q < QC; q++)
            [[unroll]] for (int i = 0; i < 4; i++) acc[p][q][i] = vec4(0.0);

    vec4 va[LOADS], vb[LOADS];
#define LOAD_STAGE(K0)                                                                          \
    [[unroll]] for (uint l = 0u; l < LOADS; l++) {                                              \
        LOAD_A(l, K0)                                                                           \
        vb[l] = (b_col_in && (K0) + B_K(l) < pc.k_end)                                          \
            ? b.v[b_base + ((K0) + B_K(l)) * n4 + col0_4 + b_c40] : vec4(0.0);                  \
    }
#if defined(EXACT_VIA_F64)
    // Running least keys of the values this thread loaded, folded as they are stored (the
    // loads have landed by then).
    uint least_a = 0xFFFFFFFFu, least_b = 0xFFFFFFFFu;
#define NOTE_LEAST(l)                                                                           \
    least_a = min(least_a, least_key4(va[l]));                                                  \
    least_b = min(least_b, least_key4(vb[l]));
#else
#define NOTE_LEAST(l)
#endif
#define STORE_STAGE(S)                                                                          \
    [[unroll]] for (uint l = 0u; l < LOADS; l++) {                                              \
        NOTE_LEAST(l)                                                                           \
        STORE_A(S, l)                                                                           \
        bs4[S][B_K(l)][b_c40] = vb[l];                                                          \
    }

#if defined(EXACT_VIA_F64)
    // Visible after the first stage's barrier.
    if (lid == 0u) {
        least_keys[0] = 0xFFFFFFFFu;
        least_keys[1] = 0xFFFFFFFFu;
    }
#endif
    uint k0 = pc.k_begin;
    uint stage = 0u;
    LOAD_STAGE(k0);
    STORE_STAGE(0);
    barrier();

    for (; k0 < pc.k_end; k0 += BK) {
        const uint next = k0 + BK;
        const bool more = next < pc.k_end;
        if (more) {
            LOAD_STAGE(next);
        }
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
            vec4 ar[PR], br[QC];
            [[unroll]] for (uint p = 0u; p < PR; p++) ar[p] = as4[stage][kk][p * 8u + ty];
            [[unroll]] for (uint q = 0u; q < QC; q++) br[q] = bs4[stage][kk][q * 16u + tx];
            [[unroll]] for (uint p = 0u; p < PR; p++)
                [[unroll]] for (uint i = 0u; i < 4u; i++)
                    [[unroll]] for (uint q = 0u; q < QC; q++)
                        acc[p][q][i] = fma(vec4(ar[p][i]), br[q], acc[p][q][i]);
        }
        if (more) {
            STORE_STAGE(stage ^ 1u);
        }
        barrier();
        stage ^= 1u;
    }

#if defined(EXACT_VIA_F64)
    // The tile's least keys: every thread's, folded once (the last barrier of the K loop
    // orders this after the initial values). With a split K, adding an earlier range's sum
    // (which an exact tile may have left subnormal) must not flush either; a tile where it
    // could is exact as a whole.
    atomicMin(least_keys[0], least_a);
    atomicMin(least_keys[1], least_b);
    if ((pc.flags & FLAG_ACCUMULATE) != 0u) {
        bool risky = false;
        [[unroll]] for (uint p = 0u; p < PR; p++) {
            [[unroll]] for (uint i = 0u; i < 4u; i++) {
                const uint gr = row0 + p * 32u + ty * 4u + i;
                [[unroll]] for (uint q = 0u; q < QC; q++) {
                    const uint gc4 = col0_4 + q * 16u + tx;
                    if (gr >= pc.m || gc4 >= n4) continue;
                    const vec4 before = c.v[c_base + gr * n4 + gc4];
                    risky = risky || add_may_flush(acc[p][q][i] + before, before);
                }
            }
        }
        if (risky) atomicMin(least_keys[0], 0u);
    }
    barrier();
    const uint ea = least_exponent(least_keys[0]), eb = least_exponent(least_keys[1]);
    if (ea == 0u || eb == 0u || ea + eb < 174u) {
        // No proof: this thread's outputs again, in f64 from the operands' bits.
        for (uint p = 0u; p < PR; p++) {
            for (uint i = 0u; i < 4u; i++) {
                const uint gr = row0 + p * 32u + ty * 4u + i;
                if (gr >= pc.m) continue;
                for (uint q = 0u; q < QC; q++) {
                    const uint gc4 = col0_4 + q * 16u + tx;
                    if (gc4 >= n4) continue;
                    const uint at = c_base + gr * n4 + gc4;
                    dvec4 s = (pc.flags & FLAG_ACCUMULATE) != 0u ? widen4(c.v[at]) : dvec4(0.0);
                    // K ranges start and end at multiples of 4 (K is one).
                    for (uint kq = pc.k_begin / 4u; kq < pc.k_end / 4u; kq++) {
#if defined(A_KMAJOR)
                        dvec4 x;
                        for (uint j = 0u; j < 4u; j++) {
                            const uint at_a = 4u * a_base + (4u * kq + j) * pc.m + gr;
                            x[j] = f32_bits_to_double(floatBitsToUint(a.v[at_a >> 2][at_a & 3u]));
                        }
#else
                        const dvec4 x = widen4(a.v[a_base + gr * k4 + kq]);
#endif
                        for (uint j = 0u; j < 4u; j++) s += x[j] * widen4(b.v[b_base + (4u * kq + j) * n4 + gc4]);
                    }
                    c.v[at] = narrow4(s);
                }
            }
        }
        return;
    }
#endif

    for (uint p = 0u; p < PR; p++) {
        for (uint i = 0u; i < 4u; i++) {
            const uint gr = row0 + p * 32u + ty * 4u + i;
            if (gr >= pc.m) continue;
            for (uint q = 0u; q < QC; q++) {
                const uint gc4 = col0_4 + q * 16u + tx;
                if (gc4 >= n4) continue;
                const uint at = c_base + gr * n4 + gc4;
                vec4 v = acc[p][q][i];
                if ((pc.flags & FLAG_ACCUMULATE) != 0u) v += c.v[at];
                c.v[at] = v;
            }
        }
    }
}
