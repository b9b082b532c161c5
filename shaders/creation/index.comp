#version 460
// Index-valued creation: iota (flat or along one axis) and eye.
//   mode 0: out[i] = i
//   mode 1: out[i] = (i / inner) % dim          (iota along an axis)
//   mode 2: out[i] = ((i / cols) % rows == i % cols) ? 1 : 0   (eye over the last two axes)
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
// OPS = ty | mode << 8
const uint TY = OPS & 0xFFu;
const uint MODE = (OPS >> 8) & 0xFFu;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uint n;
    uint dim;    // mode 1: axis size; mode 2: rows
    uint inner;  // mode 1: product of the dims after the axis; mode 2: cols
} pc;

void main() {
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        uint v;
        if (MODE == 0u) v = i;
        else if (MODE == 1u) v = (i / pc.inner) % pc.dim;
        else v = ((i / pc.inner) % pc.dim == i % pc.inner) ? 1u : 0u;
        store_elem(pc.out_addr, TY, i, T(v));
    }
}
