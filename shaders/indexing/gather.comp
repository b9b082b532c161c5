#version 460
// Nx gather: out[b, r] = t[axes <- clamp(indices[b, :]), other axes <- r], where b walks
// the batch of index rows (each `k` integers) and r the tensor's axes not indexed, in
// order. Elements move as bits. Out-of-range indices are clamped to the axis.
// Defines: W8, W16, W32 or W64 (the element width).
#include "../common/raw.glsl"

layout(local_size_x = 256) in;

// OPS = the indices' element type code.
layout(constant_id = 0) const uint OPS = 0u;

#define MAX_RANK 6

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 t_addr;
    uvec2 idx_addr;
    uint n;       // output elements
    uint inner;   // elements per index row (product of the other axes)
    uint k;       // indices per row
    uint rank;    // tensor rank
    uint axes;    // 4 bits per index column: the tensor axis it addresses
    uint other;   // bit d set when tensor axis d is not indexed
    uint dims[MAX_RANK];
    int strides[MAX_RANK];
} pc;

void main() {
    uint threads = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint start = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = start; i < pc.n; i += threads) {
        uint b = i / pc.inner;
        uint r = i % pc.inner;
        int off = 0;
        for (uint j = 0u; j < pc.k; j++) {
            uint axis = (pc.axes >> (4u * j)) & 0xFu;
            uint idx = clamped_index(pc.idx_addr, OPS, b * pc.k + j, pc.dims[axis]);
            off += int(idx) * pc.strides[axis];
        }
        for (int d = int(pc.rank) - 1; d >= 0; d--) {
            if ((pc.other & (1u << uint(d))) != 0u) {
                uint dim = pc.dims[d];
                off += int(r % dim) * pc.strides[d];
                r /= dim;
            }
        }
        RawBuf(pc.out_addr).v[i] = RawBuf(pc.t_addr).v[uint(off)];
    }
}
