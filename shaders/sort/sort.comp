#version 460
// Stable sort of rows (argsort, then the values moved by the indices), as Nx orders:
// ascending puts NaN last, descending puts NaN first; equal keys keep their order (the
// index breaks ties). Bitonic sort over rows padded to a power of two P; padding indices
// (0xFFFFFFFF) sort after everything. Modes (OPS & 0xFF):
//   0 LOCAL: one workgroup per row, the whole sort in shared memory (P <= LOCAL_MAX);
//     writes the row's indices to idx[row * n ..].
//   1 INIT: keys[row * P + i] = in[row * n + i] (as T), scratch idx = i (or padding).
//   2 STEP: one compare-exchange step (k, j) of the global bitonic network on scratch.
//   3 FINISH: idx[row * n + i] = scratch idx[row * P + i].
//   4 VALUES: out[row * n + i] = in[row * n + idx[row * n + i]] (any element type, exact).
#include "../common/types.glsl"

#define GROUP 256
#define LOCAL_MAX 2048
layout(local_size_x = GROUP) in;

// OPS = mode | in_ty << 8 | descending << 16
layout(constant_id = 0) const uint OPS = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;   // VALUES: the sorted values
    uvec2 in_addr;    // the rows to sort (contiguous, row-major)
    uvec2 idx_addr;   // u32 indices [rows * n]
    uvec2 keys_addr;  // global scratch: T keys [rows * P]
    uvec2 sidx_addr;  // global scratch: u32 indices [rows * P]
    uint rows;
    uint n;
    uint p;
    uint k;
    uint j;
} pc;

#define PAD 0xFFFFFFFFu

const uint MODE = OPS & 0xFFu;
const uint IN_TY = (OPS >> 8) & 0xFFu;
const bool DESC = ((OPS >> 16) & 1u) != 0u;

bool is_nan_key(T x) {
#if defined(IS_FLOAT)
    return isnan(x);
#else
    return false;
#endif
}

// Whether (ka, ia) comes after (kb, ib) in the final order.
bool after(T ka, uint ia, T kb, uint ib) {
    if (ia == PAD || ib == PAD) return ia > ib;
    bool na = is_nan_key(ka);
    bool nb = is_nan_key(kb);
    if (na || nb) {
        if (na && nb) return ia > ib;
        return DESC ? nb : na;
    }
    if (!T_EQUAL(ka, kb)) return DESC ? T_LESS(ka, kb) : T_LESS(kb, ka);
    return ia > ib;
}

shared T s_key[LOCAL_MAX];
shared uint s_idx[LOCAL_MAX];

void local_sort(uint row) {
    uint base = row * pc.n;
    for (uint i = gl_LocalInvocationID.x; i < pc.p; i += GROUP) {
        if (i < pc.n) {
            s_key[i] = load_elem(pc.in_addr, IN_TY, base + i);
            s_idx[i] = i;
        } else {
            s_key[i] = T(0);
            s_idx[i] = PAD;
        }
    }
    barrier();
    for (uint k = 2u; k <= pc.p; k <<= 1) {
        for (uint j = k >> 1; j > 0u; j >>= 1) {
            for (uint q = gl_LocalInvocationID.x; q < pc.p / 2u; q += GROUP) {
                uint i = (q / j) * 2u * j + (q % j);
                uint l = i + j;
                bool up = (i & k) == 0u;
                T ka = s_key[i];
                T kb = s_key[l];
                uint ia = s_idx[i];
                uint ib = s_idx[l];
                if (after(ka, ia, kb, ib) == up) {
                    s_key[i] = kb;
                    s_key[l] = ka;
                    s_idx[i] = ib;
                    s_idx[l] = ia;
                }
            }
            barrier();
        }
    }
    for (uint i = gl_LocalInvocationID.x; i < pc.n; i += GROUP) {
        BufU32(pc.idx_addr).v[base + i] = s_idx[i];
    }
    barrier();
}

void main() {
    if (MODE == 0u) {
        uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
        for (uint row = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; row < pc.rows; row += groups) {
            local_sort(row);
        }
        return;
    }
    BufT keys = BufT(pc.keys_addr);
    BufU32 sidx = BufU32(pc.sidx_addr);
    BufU32 idx = BufU32(pc.idx_addr);
    uint total = MODE == 2u ? pc.rows * (pc.p / 2u) : (MODE == 1u ? pc.rows * pc.p : pc.rows * pc.n);
    for (uint t = global_index(); t < total; t += global_threads()) {
        if (MODE == 1u) {
            uint row = t / pc.p;
            uint i = t % pc.p;
            keys.v[t] = i < pc.n ? load_elem(pc.in_addr, IN_TY, row * pc.n + i) : T(0);
            sidx.v[t] = i < pc.n ? i : PAD;
        } else if (MODE == 2u) {
            uint half_p = pc.p / 2u;
            uint row = t / half_p;
            uint q = t % half_p;
            uint i = (q / pc.j) * 2u * pc.j + (q % pc.j);
            uint a = row * pc.p + i;
            uint b = a + pc.j;
            bool up = (i & pc.k) == 0u;
            T ka = keys.v[a];
            T kb = keys.v[b];
            uint ia = sidx.v[a];
            uint ib = sidx.v[b];
            if (after(ka, ia, kb, ib) == up) {
                keys.v[a] = kb;
                keys.v[b] = ka;
                sidx.v[a] = ib;
                sidx.v[b] = ia;
            }
        } else if (MODE == 3u) {
            uint row = t / pc.n;
            idx.v[t] = sidx.v[row * pc.p + t % pc.n];
        } else {
            // Moved as bits, so no value passes through T (NaN payloads, subnormals).
            uint src = (t / pc.n) * pc.n + idx.v[t];
            if (IN_TY == TY_U8 || IN_TY == TY_S8 || IN_TY == TY_F8 || IN_TY == TY_F8E4M3FN ||
                (IN_TY >= TY_U2 && IN_TY <= TY_S4)) {
                BufU8(pc.out_addr).v[t] = BufU8(pc.in_addr).v[src];
            } else if (IN_TY == TY_U16 || IN_TY == TY_S16 || IN_TY == TY_F16 || IN_TY == TY_BF16) {
                BufU16(pc.out_addr).v[t] = BufU16(pc.in_addr).v[src];
            } else if (IN_TY == TY_U64 || IN_TY == TY_S64 || IN_TY == TY_F64) {
                BufU64(pc.out_addr).v[t] = BufU64(pc.in_addr).v[src];
            } else {
                BufU32(pc.out_addr).v[t] = BufU32(pc.in_addr).v[src];
            }
        }
    }
}
