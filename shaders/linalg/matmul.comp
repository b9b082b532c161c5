#version 460
// Batched matmul C[b] = A[b] (M x K) * B[b] (K x N), contiguous. C is row-major; A is
// row-major, or stored k-major (K x M, a transposed operand read in place) when
// `flags` has FLAG_A_KMAJOR; B is row-major, or stored n-major (N x K) with
// FLAG_B_NMAJOR.
// 64x64 output tile per workgroup, 16-deep K steps through shared memory, 4x4 outputs per
// thread. Operands convert to the compute type T on load; accumulation is in T.
#extension GL_EXT_control_flow_attributes : require
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
// OPS = a_ty | b_ty << 8 | c_ty << 16

layout(push_constant) uniform Params {
    uvec2 c_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint m;
    uint n;
    uint k;        // row length of A (and rows of B)
    uint k_begin;  // this launch sums over k in [k_begin, k_end) ...
    uint k_end;
    uint flags;    // ... and adds C's current value with FLAG_ACCUMULATE (split-K)
} pc;

// Bits of `flags` (ops/dot.rs: `Layout`).
#define FLAG_ACCUMULATE 1u
#define FLAG_A_KMAJOR 2u
#define FLAG_B_NMAJOR 4u

#define BM 64
#define BN 64
#define BK 16

shared T as[BK][BM + 1];
shared T bs[BK][BN + 1];

void main() {
    const uint a_ty = OPS & 0xFFu;
    const uint b_ty = (OPS >> 8) & 0xFFu;
    const uint c_ty = (OPS >> 16) & 0xFFu;
    uint batch = gl_WorkGroupID.z;
    uint row0 = gl_WorkGroupID.y * BM;
    uint col0 = gl_WorkGroupID.x * BN;
    uint lid = gl_LocalInvocationID.x;
    uint tr = (lid / 16u) * 4u;  // this thread's 4 rows in the tile
    uint tc = (lid % 16u) * 4u;  // and 4 columns
    uint a_base = batch * pc.m * pc.k;
    uint b_base = batch * pc.k * pc.n;
    uint c_base = batch * pc.m * pc.n;

    T acc[4][4];
    [[unroll]] for (int i = 0; i < 4; i++)
        [[unroll]] for (int j = 0; j < 4; j++) acc[i][j] = T(0);

    const bool a_kmajor = (pc.flags & FLAG_A_KMAJOR) != 0u;
    const bool b_nmajor = (pc.flags & FLAG_B_NMAJOR) != 0u;

    if ((pc.flags & FLAG_ACCUMULATE) != 0u) {
        [[unroll]] for (uint i = 0u; i < 4u; i++)
            [[unroll]] for (uint j = 0u; j < 4u; j++) {
                uint gr = row0 + tr + i;
                uint gc = col0 + tc + j;
                if (gr < pc.m && gc < pc.n) acc[i][j] = load_elem(pc.c_addr, c_ty, c_base + gr * pc.n + gc);
            }
    }

    for (uint k0 = pc.k_begin; k0 < pc.k_end; k0 += BK) {
        // 64x16 A tile and 16x64 B tile: 1024 elements each, 4 per thread. Neighbouring
        // threads read neighbouring elements of either layout.
        for (uint e = lid; e < BM * BK; e += 256u) {
            uint r = a_kmajor ? e % BM : e / BK;
            uint kk = a_kmajor ? e / BM : e % BK;
            uint gr = row0 + r;
            uint gk = k0 + kk;
            uint at = a_base + (a_kmajor ? gk * pc.m + gr : gr * pc.k + gk);
            as[kk][r] = (gr < pc.m && gk < pc.k_end) ? load_elem(pc.a_addr, a_ty, at) : T(0);
        }
        for (uint e = lid; e < BK * BN; e += 256u) {
            uint kk = b_nmajor ? e % BK : e / BN;
            uint c = b_nmajor ? e / BK : e % BN;
            uint gk = k0 + kk;
            uint gc = col0 + c;
            uint at = b_base + (b_nmajor ? gc * pc.k + gk : gk * pc.n + gc);
            bs[kk][c] = (gk < pc.k_end && gc < pc.n) ? load_elem(pc.b_addr, b_ty, at) : T(0);
        }
        barrier();
        [[unroll]] for (uint kk = 0u; kk < BK; kk++) {
            T av[4];
            T bv[4];
            [[unroll]] for (int i = 0; i < 4; i++) av[i] = as[kk][tr + i];
            [[unroll]] for (int j = 0; j < 4; j++) bv[j] = bs[kk][tc + j];
            [[unroll]] for (int i = 0; i < 4; i++)
                [[unroll]] for (int j = 0; j < 4; j++) acc[i][j] += av[i] * bv[j];
        }
        barrier();
    }

    [[unroll]] for (uint i = 0u; i < 4u; i++) {
        uint gr = row0 + tr + i;
        if (gr >= pc.m) continue;
        [[unroll]] for (uint j = 0u; j < 4u; j++) {
            uint gc = col0 + tc + j;
            if (gc < pc.n) store_elem(pc.c_addr, c_ty, c_base + gr * pc.n + gc, acc[i][j]);
        }
    }
}
