#version 460
// Reduction over a middle block of axes: in is [outer, len, inner] and
// out[chunk, o, c] = fold(in[o, k, c] for k in chunk `chunk` of len). Adjacent invocations
// take adjacent c, so every load is coalesced; with chunks > 1 the caller folds the
// partials [chunks, outer * inner] with a second launch (outer = 1, len = chunks).
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// OPS = op | in_ty << 8 | out_ty << 16
layout(constant_id = 0) const uint OPS = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint outer;
    uint len;
    uint inner;
    uint chunk_len;
    uint chunks;
} pc;

#include "ops.glsl"

void main() {
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    uint cols = pc.outer * pc.inner;
    uint total = cols * pc.chunks;
    for (uint t = global_index(); t < total; t += global_threads()) {
        uint chunk = t / cols;
        uint col = t % cols;
        uint o = col / pc.inner;
        uint c = col % pc.inner;
        uint begin = chunk * pc.chunk_len;
        uint end = min(pc.len, begin + pc.chunk_len);
        uint at = (o * pc.len + begin) * pc.inner + c;
        T acc = identity_of(op);
        for (uint k = begin; k < end; k++) {
            acc = combine(op, acc, load_elem(pc.in_addr, in_ty, at));
            at += pc.inner;
        }
        store_elem(pc.out_addr, out_ty, t, acc);
    }
}
