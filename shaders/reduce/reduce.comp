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
shared uint partial_at[256];
shared uint partial16_at[16];

void main() {
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    // Float max and min carry each partial's index (see `combine_at`): threads read
    // strided elements, and a tie of 0.0 and -0.0 goes to the earlier one.
    const bool at = needs_index(op);
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
        uint acc_at = 0xFFFFFFFFu;
        for (uint k = begin + lid; k < end; k += 256u) {
            T x = load_elem(pc.in_addr, in_ty, base + k);
            if (at) {
                combine_at(op, acc, acc_at, x, k);
            } else {
                acc = combine(op, acc, x);
            }
        }
        // Two barriers, not a tree's nine: 16 threads fold 16 partials each (a stride of
        // 16, so their reads hit distinct banks), then thread 0 folds those 16.
        partial[lid] = acc;
        partial_at[lid] = acc_at;
        barrier();
        if (lid < 16u) {
            T a = partial[lid];
            uint a_at = partial_at[lid];
            for (uint s = 1u; s < 16u; s++) {
                if (at) {
                    combine_at(op, a, a_at, partial[lid + 16u * s], partial_at[lid + 16u * s]);
                } else {
                    a = combine(op, a, partial[lid + 16u * s]);
                }
            }
            partial16[lid] = a;
            partial16_at[lid] = a_at;
        }
        barrier();
        if (lid == 0u) {
            T total = partial16[0];
            uint total_at = partial16_at[0];
            for (uint s = 1u; s < 16u; s++) {
                if (at) {
                    combine_at(op, total, total_at, partial16[s], partial16_at[s]);
                } else {
                    total = combine(op, total, partial16[s]);
                }
            }
            store_elem(pc.out_addr, out_ty, g, total);
        }
    }
}
