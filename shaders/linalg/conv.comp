#version 460
// Nx conv in canonical layout, after the host has permuted, padded and dilated:
//   out[n, o, p] = sum over c < Ck, k in the window of
//                  in[n + bg * (N / B), fg * Ck + c, p * stride + k] * ker[o, c, k]
// with bg = o / (O / B) (batch groups) and fg = o / (O / G) (feature groups); channels
// first, then the window in row-major order, as Nx.BinaryBackend sums.
//
// Geometry (u32 buffer): N, C, O, Ck, B, G, spatial rank S, then per spatial axis
// in_dim (padded), out_dim, k_dim (dilated), stride.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// OPS = in_ty | ker_ty << 8 | out_ty << 16
layout(constant_id = 0) const uint OPS = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uvec2 ker_addr;
    uvec2 geo_addr;
    uint n;  // output elements
} pc;

void main() {
    const uint in_ty = OPS & 0xFFu;
    const uint ker_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    BufU32 geo = BufU32(pc.geo_addr);
    const uint batches = geo.v[0];
    const uint channels = geo.v[1];
    const uint filters = geo.v[2];
    const uint ck = geo.v[3];
    const uint bgroups = geo.v[4];
    const uint fgroups = geo.v[5];
    const uint rank = geo.v[6];
    uint in_plane = 1u;
    uint out_plane = 1u;
    uint window = 1u;
    for (uint d = 0u; d < rank; d++) {
        in_plane *= geo.v[7u + 4u * d];
        out_plane *= geo.v[8u + 4u * d];
        window *= geo.v[9u + 4u * d];
    }
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        const uint p = i % out_plane;
        const uint o = (i / out_plane) % filters;
        const uint n = i / (out_plane * filters);
        const uint bg = o / (filters / bgroups);
        const uint fg = o / (filters / fgroups);
        const uint in_batch = n + bg * (batches / bgroups);
        T acc = T(0);
        for (uint c = 0u; c < ck; c++) {
            const uint in_base = (in_batch * channels + fg * ck + c) * in_plane;
            const uint ker_base = (o * ck + c) * window;
            for (uint k = 0u; k < window; k++) {
                uint rp = p;
                uint rk = k;
                uint off = 0u;
                uint scale = 1u;
                for (int d = int(rank) - 1; d >= 0; d--) {
                    const uint b = 7u + 4u * uint(d);
                    const uint in_dim = geo.v[b];
                    const uint out_dim = geo.v[b + 1u];
                    const uint k_dim = geo.v[b + 2u];
                    off += ((rp % out_dim) * geo.v[b + 3u] + rk % k_dim) * scale;
                    scale *= in_dim;
                    rp /= out_dim;
                    rk /= k_dim;
                }
                acc += load_elem(pc.in_addr, in_ty, in_base + off) * load_elem(pc.ker_addr, ker_ty, ker_base + k);
            }
        }
        store_elem(pc.out_addr, out_ty, i, acc);
    }
}
