#version 460
// Row reduction: in is [rows, len] (reduced axes moved last by the caller). Workgroup
// (row, chunk) folds in[row, chunk*chunk_len .. +chunk_len] into out[row * chunks + chunk];
// with chunks > 1 the caller runs a second pass over the partials.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
// OPS = op | in_ty << 8 | out_ty << 16

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint rows;
    uint len;
    uint chunk_len;
    uint chunks;
} pc;

#include "ops.glsl"

shared T partial[256];
shared T partial16[16];

void main() {
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    uint lid = gl_LocalInvocationID.x;
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    uint total = pc.rows * pc.chunks;
    for (uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; g < total; g += groups) {
        uint row = g / pc.chunks;
        uint chunk = g % pc.chunks;
        uint begin = chunk * pc.chunk_len;
        uint end = min(pc.len, begin + pc.chunk_len);
        uint base = row * pc.len;
        T acc = identity_of(op);
        for (uint k = begin + lid; k < end; k += 256u) {
            acc = combine(op, acc, load_elem(pc.in_addr, in_ty, base + k));
        }
        // Two barriers, not a tree's nine: 16 threads fold 16 partials each (a stride of
        // 16, so their reads hit distinct banks), then thread 0 folds those 16.
        partial[lid] = acc;
        barrier();
        if (lid < 16u) {
            T a = partial[lid];
            for (uint s = 1u; s < 16u; s++) a = combine(op, a, partial[lid + 16u * s]);
            partial16[lid] = a;
        }
        barrier();
        if (lid == 0u) {
            T total = partial16[0];
            for (uint s = 1u; s < 16u; s++) total = combine(op, total, partial16[s]);
            store_elem(pc.out_addr, out_ty, g, total);
        }
    }
}
