#version 460
// Index-valued creation: iota (flat or along one axis) and eye.
//   mode 0: out[i] = i
//   mode 1: out[i] = (i / inner) % dim          (iota along an axis)
//   mode 2: out[i] = ((i / cols) % rows == i % cols) ? 1 : 0   (eye over the last two axes)
#include "../common/types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uint n;
    uint ty;
    uint mode;
    uint dim;    // mode 1: axis size; mode 2: rows
    uint inner;  // mode 1: product of the dims after the axis; mode 2: cols
} pc;

void main() {
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        uint v;
        if (pc.mode == 0u) v = i;
        else if (pc.mode == 1u) v = (i / pc.inner) % pc.dim;
        else v = ((i / pc.inner) % pc.dim == i % pc.inner) ? 1u : 0u;
        store_elem(pc.out_addr, pc.ty, i, T(v));
    }
}
