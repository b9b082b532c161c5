#version 460
// argmax / argmin over rows of a [rows, len] input: one workgroup per row.
// NaN counts as larger than every number (argmax finds it, argmin skips it), as in Nx.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint rows;
    uint len;
    uint ops;  // is_min | tie_high << 1 | in_ty << 8 | out_ty << 16
} pc;

shared T best_v[256];

// Indices are written as integers, never through T (a float T would round them above 2^24).
void store_index(uvec2 addr, uint ty, uint i, uint idx) {
    if (ty == TY_U8 || ty == TY_S8) BufU8(addr).v[i] = uint8_t(idx & 0xFFu);
    else if (ty == TY_U16 || ty == TY_S16) BufU16(addr).v[i] = uint16_t(idx & 0xFFFFu);
    else if (ty == TY_U64 || ty == TY_S64) BufU64(addr).v[i] = uvec2(idx, 0u);
    else BufU32(addr).v[i] = idx;
}
shared uint best_i[256];

// True when (v, i) should replace (bv, bi).
bool better(T v, uint i, T bv, uint bi, bool is_min, bool tie_high) {
    if (i == 0xFFFFFFFFu) return false;
    if (bi == 0xFFFFFFFFu) return true;
#if defined(IS_FLOAT)
    bool vn = isnan(v);
    bool bn = isnan(bv);
    if (vn || bn) {
        if (vn && bn) return tie_high ? i > bi : i < bi;
        return is_min ? bn : vn;
    }
#endif
    if (v == bv) return tie_high ? i > bi : i < bi;
    return is_min ? v < bv : v > bv;
}

void main() {
    bool is_min = (pc.ops & 1u) != 0u;
    bool tie_high = (pc.ops & 2u) != 0u;
    uint in_ty = (pc.ops >> 8) & 0xFFu;
    uint out_ty = (pc.ops >> 16) & 0xFFu;
    uint lid = gl_LocalInvocationID.x;
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    for (uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; row < pc.rows; row += groups) {
        uint base = row * pc.len;
        T bv = T(0);
        uint bi = 0xFFFFFFFFu;
        for (uint k = lid; k < pc.len; k += 256u) {
            T v = load_elem(pc.in_addr, in_ty, base + k);
            if (better(v, k, bv, bi, is_min, tie_high)) { bv = v; bi = k; }
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        barrier();
        for (uint s = 128u; s > 0u; s >>= 1) {
            if (lid < s && better(best_v[lid + s], best_i[lid + s], best_v[lid], best_i[lid], is_min, tie_high)) {
                best_v[lid] = best_v[lid + s];
                best_i[lid] = best_i[lid + s];
            }
            barrier();
        }
        if (lid == 0u) store_index(pc.out_addr, out_ty, row, best_i[0] == 0xFFFFFFFFu ? 0u : best_i[0]);
        barrier();
    }
}
