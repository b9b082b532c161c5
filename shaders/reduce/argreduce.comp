#version 460
// argmax / argmin over rows of a [rows, len] input. NaN counts as larger than every
// number for argmax and smaller for argmin: it always wins, as in Nx, and of several NaNs
// the last one wins whatever the tie break (Nx.BinaryBackend takes every NaN it meets).
// Ties go to the lowest index, or the highest with tie_high.
//   pass 0: one workgroup per row; writes the index in the output type.
//   pass 1: workgroup (row, chunk) over chunk_len elements; writes the best value (in
//           T's own storage type) to out[g] and its row index (u32) to idx[g].
//   pass 2: one workgroup per row over the `len` partials of pass 1 (values from in,
//           indices from idx); writes the final index in the output type.
// Long rows take passes 1 and 2, so no invocation loops more than chunk_len / 256 times.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
// OPS = is_min | tie_high << 1 | in_ty << 8 | out_ty << 16

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uvec2 idx_addr;
    uint rows;
    uint len;
    uint chunk_len;
    uint chunks;
    uint pass;
} pc;

shared T best_v[256];

// Indices are written as integers, never through T (a float T would round them above 2^24).
void store_index(uvec2 addr, uint ty, uint i, uint idx) {
    if (ty == TY_U8 || ty == TY_S8) BufU8(addr).v[i] = uint8_t(idx & 0xFFu);
    else if (ty >= TY_U2 && ty <= TY_S4) BufU8(addr).v[i] = uint8_t(sub_byte(ty, idx));
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
        // A NaN wins over every number, for argmin too, and the later of two NaNs wins
        // (Nx's rule).
        if (vn && bn) return i > bi;
        return vn;
    }
#endif
    if (T_EQUAL(v, bv)) return tie_high ? i > bi : i < bi;
    return is_min ? T_LESS(v, bv) : T_LESS(bv, v);
}

void main() {
    const bool is_min = (OPS & 1u) != 0u;
    const bool tie_high = (OPS & 2u) != 0u;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    uint lid = gl_LocalInvocationID.x;
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    uint total = pc.pass == 1u ? pc.rows * pc.chunks : pc.rows;
    for (uint g = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; g < total; g += groups) {
        uint row = pc.pass == 1u ? g / pc.chunks : g;
        uint begin = pc.pass == 1u ? (g % pc.chunks) * pc.chunk_len : 0u;
        uint end = pc.pass == 1u ? min(pc.len, begin + pc.chunk_len) : pc.len;
        uint base = row * pc.len;
        T bv = T(0);
        uint bi = 0xFFFFFFFFu;
        for (uint k = begin + lid; k < end; k += 256u) {
            T v;
            uint idx;
            if (pc.pass == 2u) {
                v = load_elem(pc.in_addr, CT_TY, base + k);
                idx = BufU32(pc.idx_addr).v[base + k];
            } else {
                v = load_elem(pc.in_addr, in_ty, base + k);
                idx = k;
            }
            if (better(v, idx, bv, bi, is_min, tie_high)) { bv = v; bi = idx; }
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
        if (lid == 0u) {
            if (pc.pass == 1u) {
                store_elem(pc.out_addr, CT_TY, g, best_v[0]);
                BufU32(pc.idx_addr).v[g] = best_i[0];
            } else {
                store_index(pc.out_addr, out_ty, g, best_i[0] == 0xFFFFFFFFu ? 0u : best_i[0]);
            }
        }
        barrier();
    }
}
