#version 460
// Nx window_sum/product/max/min: out[i] folds the window of input elements anchored at
// output position i (per axis: out * stride - pad_lo + k * dilation for window offsets k),
// in row-major window order, starting from the op's identity in the output type. Elements
// in the padding are that identity, so they are skipped.
//
// The per-axis geometry is a small u32 buffer (no rank limit): for axis d, words 6d..6d+5
// are in_dim, out_dim, window_dim, stride, pad_lo (as int) and dilation.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// OPS = op | in_ty << 8 | out_ty << 16 (op codes of ops.glsl).
layout(constant_id = 0) const uint OPS = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uvec2 geo_addr;
    uvec2 init;   // the identity's bits in T (low word first)
    uint n;       // output elements
    uint rank;
    uint window;  // elements per window
} pc;

#include "ops.glsl"

T init_value() {
#if defined(CT_F64)
    return packDouble2x32(pc.init);
#elif defined(CT_I64)
    return int64_t(packUint2x32(pc.init));
#elif defined(CT_U64)
    return packUint2x32(pc.init);
#elif defined(CT_F32)
    return uintBitsToFloat(pc.init.x);
#elif defined(CT_I32)
    return int(pc.init.x);
#else
    return pc.init.x;
#endif
}

void main() {
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    BufU32 geo = BufU32(pc.geo_addr);
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        T acc = init_value();
        for (uint w = 0u; w < pc.window; w++) {
            uint ri = i;
            uint rw = w;
            int off = 0;
            int scale = 1;
            bool inside = true;
            for (int d = int(pc.rank) - 1; d >= 0; d--) {
                uint b = uint(d) * 6u;
                uint in_dim = geo.v[b];
                uint out_dim = geo.v[b + 1u];
                uint win = geo.v[b + 2u];
                int c = int((ri % out_dim) * geo.v[b + 3u]) - int(geo.v[b + 4u]) + int((rw % win) * geo.v[b + 5u]);
                ri /= out_dim;
                rw /= win;
                if (c < 0 || c >= int(in_dim)) {
                    inside = false;
                    break;
                }
                off += c * scale;
                scale *= int(in_dim);
            }
            if (inside) acc = combine(op, acc, load_elem(pc.in_addr, in_ty, uint(off)));
        }
        store_elem(pc.out_addr, out_ty, i, acc);
    }
}
