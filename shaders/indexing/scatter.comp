#version 460
// Nx indexed_put / indexed_add. Row u of `indices` (k integers, clamped to their axes)
// names a position along `axes`; update row u (`inner` elements, over the tensor's other
// axes in order) goes there. Modes (OPS >> 8):
//   0 WINNER: win[pos(u)] = max(win[pos(u)], u + 1), one invocation per row; the last row
//     naming a position wins, as in Nx.BinaryBackend's indexed_put.
//   1 PUT: out[pos(u), r] = upd[u, r] where win[pos(u)] == u + 1 (elements moved as bits).
//   2 ADD: out[pos(u), r] += upd[u, r] atomically, in the accumulator type: 32-bit integers
//     (W32), 64-bit integers (W64) or f64 through compare-and-swap (W64 with FLOAT_ADD).
// Defines: W8, W16, W32 or W64 (the element width of out/upd); ADD (modes 0 and 1 are
// built without it, so they need no atomics beyond 32-bit max); FLOAT_ADD (with W64).
#include "../common/raw.glsl"
#if defined(ADD) && defined(W64)
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_atomic_int64 : require
layout(buffer_reference, std430, buffer_reference_align = 8) buffer AccBuf { uint64_t v[]; };
#elif defined(ADD)
layout(buffer_reference, std430, buffer_reference_align = 4) buffer AccBuf { uint v[]; };
#endif
#if defined(FLOAT_ADD)
#extension GL_ARB_gpu_shader_fp64 : require
#endif

layout(local_size_x = 256) in;

// OPS = the indices' element type code | mode << 8.
layout(constant_id = 0) const uint OPS = 0u;

#define MAX_RANK 6

layout(buffer_reference, std430, buffer_reference_align = 4) buffer WinBuf { uint v[]; };

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 upd_addr;
    uvec2 idx_addr;
    uvec2 win_addr;
    uint n;       // invocations: rows (WINNER) or rows * inner
    uint inner;   // elements per update row
    uint k;       // indices per row
    uint rank;    // tensor rank
    uint axes;    // 4 bits per index column: the tensor axis it addresses
    uint other;   // bit d set when tensor axis d is not indexed
    uint dims[MAX_RANK];
    int strides[MAX_RANK];
} pc;

void main() {
    const uint idx_ty = OPS & 0xFFu;
    const uint mode = OPS >> 8;
    uint threads = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint start = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = start; i < pc.n; i += threads) {
        uint u = mode == 0u ? i : i / pc.inner;
        uint r = mode == 0u ? 0u : i % pc.inner;
        int off = 0;
        uint pos = 0u;
        for (uint j = 0u; j < pc.k; j++) {
            uint axis = (pc.axes >> (4u * j)) & 0xFu;
            uint dim = pc.dims[axis];
            uint idx = clamped_index(pc.idx_addr, idx_ty, u * pc.k + j, dim);
            off += int(idx) * pc.strides[axis];
            pos = pos * dim + idx;
        }
        if (mode == 0u) {
            atomicMax(WinBuf(pc.win_addr).v[pos], u + 1u);
            continue;
        }
        for (int d = int(pc.rank) - 1; d >= 0; d--) {
            if ((pc.other & (1u << uint(d))) != 0u) {
                uint dim = pc.dims[d];
                off += int(r % dim) * pc.strides[d];
                r /= dim;
            }
        }
        if (mode == 1u) {
            if (WinBuf(pc.win_addr).v[pos] == u + 1u) {
                RawBuf(pc.out_addr).v[uint(off)] = RawBuf(pc.upd_addr).v[i];
            }
            continue;
        }
#if defined(ADD) && defined(FLOAT_ADD)
        AccBuf acc = AccBuf(pc.out_addr);
        double x = packDouble2x32(RawBuf(pc.upd_addr).v[i]);
        uint64_t seen = acc.v[uint(off)];
        while (true) {
            uint64_t want = packUint2x32(unpackDouble2x32(packDouble2x32(unpackUint2x32(seen)) + x));
            uint64_t got = atomicCompSwap(acc.v[uint(off)], seen, want);
            if (got == seen) break;
            seen = got;
        }
#elif defined(ADD) && defined(W64)
        atomicAdd(AccBuf(pc.out_addr).v[uint(off)], packUint2x32(RawBuf(pc.upd_addr).v[i]));
#elif defined(ADD)
        atomicAdd(AccBuf(pc.out_addr).v[uint(off)], RawBuf(pc.upd_addr).v[i]);
#endif
    }
}
