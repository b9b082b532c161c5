#version 460
// Register-blocked f32 matmul C[b] = A[b] (M x K) * B[b] (K x N), row-major, contiguous.
// The fast path of `dot` for f32 operands whose K and N are multiples of 4 and whose
// buffers are 16-byte aligned: every global access is a vec4.
//
// 128x128 output tile per workgroup of 256 threads, each thread 8x8 outputs in registers
// (two 4x4 blocks 64 rows/columns apart, so shared-memory reads are conflict-free vec4
// broadcasts). K advances BK (16; 8 measured slightly slower on an H200) at a time
// through two shared-memory stages: the next stage is
// loaded into registers while this one is multiplied, one barrier per step.
// Accumulation is in f32 with fma, as cuBLAS does without TF32. Marking every loop
// [[unroll]] made it slower on the H200 (31.5 TFLOP/s at 4096 against 36.2; raw
// nvidia-h200-2026-12-01h), unlike hgemm.comp, whose accumulators are opaque matrices.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 256) in;

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
    uint accumulate;
} pc;

#define BM 128
#define BN 128
#ifndef BK
#define BK 16
#endif
// vec4 loads per thread per stage, for each of A and B.
#define LOADS (BK / 8)
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
    const uint a_base = batch * pc.m * k4;
    const uint b_base = batch * pc.k * n4;
    const uint c_base = batch * pc.m * n4;

    // Loader roles, per load l: A tile 128 rows x BK k = 32*BK vec4 (row e/(BK/4), k quad
    // e%(BK/4)); B tile BK k x 128 columns (k e/32, column quad e%32); e = lid + 256 l.
    uint a_row[LOADS], a_kq[LOADS], b_k[LOADS], b_c4[LOADS];
    bool a_row_in[LOADS], b_col_in[LOADS];
    for (uint l = 0u; l < LOADS; l++) {
        const uint e = lid + 256u * l;
        a_row[l] = e / (BK / 4);
        a_kq[l] = (e % (BK / 4)) * 4u;
        b_k[l] = e >> 5;
        b_c4[l] = e & 31u;
        a_row_in[l] = row0 + a_row[l] < pc.m;
        b_col_in[l] = col0_4 + b_c4[l] < n4;
    }

    // Compute roles: rows ty*4.. and 64+ty*4.., columns tx*4.. and 64+tx*4...
    // A warp covers 4 rows by 8 columns of threads (not 2 by 16): its reads of B's
    // fragments are 8 distinct vec4s, one shared-memory wavefront instead of two (4096:
    // 36.9 -> 38.0-38.7 TFLOP/s on the H200, 8192: 39.0 -> 40.3; raw
    // nvidia-h200-2026-12-01s).
    const uint lane = lid & 31u, warp = lid >> 5;
    const uint tx = (warp & 1u) * 8u + (lane & 7u);
    const uint ty = (warp >> 1) * 4u + (lane >> 3);

    vec4 acc[2][2][4];
    for (int p = 0; p < 2; p++)
        for (int q = 0; q < 2; q++)
            for (int i = 0; i < 4; i++) acc[p][q][i] = vec4(0.0);

    vec4 va[LOADS], vb[LOADS];
#define LOAD_STAGE(K0)                                                                          \
    for (uint l = 0u; l < LOADS; l++) {                                                         \
        va[l] = (a_row_in[l] && (K0) + a_kq[l] < pc.k_end)                                     \
            ? a.v[a_base + (row0 + a_row[l]) * k4 + ((K0) + a_kq[l]) / 4u] : vec4(0.0);         \
        vb[l] = (b_col_in[l] && (K0) + b_k[l] < pc.k_end)                                      \
            ? b.v[b_base + ((K0) + b_k[l]) * n4 + col0_4 + b_c4[l]] : vec4(0.0);                 \
    }
#define STORE_STAGE(S)                                                                          \
    for (uint l = 0u; l < LOADS; l++) {                                                         \
        as4[S][a_kq[l] + 0u][a_row[l] >> 2][a_row[l] & 3u] = va[l].x;                           \
        as4[S][a_kq[l] + 1u][a_row[l] >> 2][a_row[l] & 3u] = va[l].y;                           \
        as4[S][a_kq[l] + 2u][a_row[l] >> 2][a_row[l] & 3u] = va[l].z;                           \
        as4[S][a_kq[l] + 3u][a_row[l] >> 2][a_row[l] & 3u] = va[l].w;                           \
        bs4[S][b_k[l]][b_c4[l]] = vb[l];                                                        \
    }

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
        for (uint kk = 0u; kk < BK; kk++) {
            vec4 ar[2] = vec4[2](as4[stage][kk][ty], as4[stage][kk][16u + ty]);
            vec4 br[2] = vec4[2](bs4[stage][kk][tx], bs4[stage][kk][16u + tx]);
            for (int p = 0; p < 2; p++)
                for (int i = 0; i < 4; i++)
                    for (int q = 0; q < 2; q++) acc[p][q][i] = fma(vec4(ar[p][i]), br[q], acc[p][q][i]);
        }
        if (more) {
            STORE_STAGE(stage ^ 1u);
        }
        barrier();
        stage ^= 1u;
    }

    for (uint p = 0u; p < 2u; p++) {
        for (uint i = 0u; i < 4u; i++) {
            const uint gr = row0 + p * 64u + ty * 4u + i;
            if (gr >= pc.m) continue;
            for (uint q = 0u; q < 2u; q++) {
                const uint gc4 = col0_4 + q * 16u + tx;
                if (gc4 >= n4) continue;
                const uint at = c_base + gr * n4 + gc4;
                vec4 v = acc[p][q][i];
                if (pc.accumulate != 0u) v += c.v[at];
                c.v[at] = v;
            }
        }
    }
}
