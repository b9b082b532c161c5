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

// OPS = op | in_ty << 8 | out_ty << 16 (op codes of ops.glsl), or for the selections of
// window_scatter_max/min (op SELECT_MAX/SELECT_MIN) op | in_ty << 8 | init_ty << 16.
layout(constant_id = 0) const uint OPS = 0u;
#define SELECT_MAX 6u
#define SELECT_MIN 7u

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uvec2 geo_addr;
    uvec2 init;   // the identity's bits in T (low word first); selections: the init tensor
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

// x >= best (SELECT_MAX) or x <= best: false where either is NaN, exact for f32
// subnormals (T_LESS).
bool replaces(uint op, T x, T best) {
#if defined(IS_FLOAT)
    if (isnan(x) || isnan(best)) return false;
#endif
    return op == SELECT_MAX ? !T_LESS(x, best) : !T_LESS(best, x);
}

// window_scatter_max/min, first pass: for window i, the flat input index of its last
// maximum (minimum) - `x >= best` replaces, as Nx.BinaryBackend selects - where padding
// holds the scatter's init value; pc.n (one past the input) when that element is padding.
void select_windows(uint op, uint in_ty, uint init_ty) {
    BufU32 geo = BufU32(pc.geo_addr);
    BufU32 chosen_out = BufU32(pc.out_addr);
    const T pad = load_elem(pc.init, init_ty, 0u);
    uint input_size = 1u;
    for (uint d = 0u; d < pc.rank; d++) input_size *= geo.v[d * 6u];
    uint windows = 1u;
    for (uint d = 0u; d < pc.rank; d++) windows *= geo.v[d * 6u + 1u];
    for (uint i = global_index(); i < windows; i += global_threads()) {
        T best = T(0);
        uint chosen = input_size;
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
                int c = int((ri % out_dim) * geo.v[b + 3u]) - int(geo.v[b + 4u]) + int(rw % win);
                ri /= out_dim;
                rw /= win;
                if (c < 0 || c >= int(in_dim)) inside = false;
                off += c * scale;
                scale *= int(in_dim);
            }
            T x = inside ? load_elem(pc.in_addr, in_ty, uint(off)) : pad;
            // The first element is chosen even when NaN (then nothing compares above it).
            if (w == 0u || replaces(op, x, best)) {
                best = x;
                chosen = inside ? uint(off) : input_size;
            }
        }
        chosen_out.v[i] = chosen;
    }
}

void main() {
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    if (op == SELECT_MAX || op == SELECT_MIN) {
        select_windows(op, in_ty, out_ty);
        return;
    }
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
            // The element first: on a tie (0.0 and -0.0) the later one wins, as
            // Nx.BinaryBackend's window fold (`max(x, acc)`) keeps the new element.
            if (inside) acc = combine(op, load_elem(pc.in_addr, in_ty, uint(off)), acc);
        }
        store_elem(pc.out_addr, out_ty, i, acc);
    }
}
