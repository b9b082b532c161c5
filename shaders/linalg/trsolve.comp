#version 460
// Nx triangular_solve by substitution. The host reduces every option combination to
// one lower-triangular system A' X' = B' (as Nx.BinaryBackend does): A' is A, maybe
// transposed, maybe with rows and columns reversed; B' is B, maybe transposed, maybe
// with rows reversed; X is stored back through B's mapping. Each invocation solves one
// column of one batch, rows in order:
//   x_i = (b_i - (a_i0 x_0 + a_i1 x_1 + ... + a_i,i-1 x_i-1)) / a_ii
// summed left to right from 0 like Nx.BinaryBackend, without contraction, in T (f64
// where the device has it, which reproduces Nx's results bit for bit; correctly rounded
// division either way). x is kept in T
// in a scratch buffer until the column is done. A zero on the diagonal sets the flag
// word (Nx raises "can't solve for singular matrix").
#include "../common/types.glsl"
#include "../common/math.glsl"

layout(local_size_x = 64) in;

// OPS = a_ty | b_ty << 8 | out_ty << 16
layout(constant_id = 0) const uint OPS = 0u;
// MODES: bit 0 transpose A, bit 1 reverse A's rows/columns and B's rows, bit 2 B is
// stored transposed (columns of B' are rows of B).
layout(constant_id = 1) const uint MODES = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uvec2 x_addr;  // scratch: batches * m * n values of T
    uvec2 flag_addr;
    uint n;  // order of A
    uint m;  // columns of B'
    uint batches;
} pc;

void main() {
    const uint a_ty = OPS & 0xFFu;
    const uint b_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    const bool transpose_a = (MODES & 1u) != 0u;
    const bool reverse = (MODES & 2u) != 0u;
    const bool transpose_b = (MODES & 4u) != 0u;
    const uint n = pc.n;
    const uint m = pc.m;
    BufT x = BufT(pc.x_addr);
    for (uint t = global_index(); t < pc.batches * m; t += global_threads()) {
        const uint batch = t / m;
        const uint c = t % m;
        const uint a_base = batch * n * n;
        const uint b_base = batch * n * m;
        const uint x_base = t * n;
        for (uint i = 0u; i < n; i++) {
            const uint ri = reverse ? n - 1u - i : i;
            precise T acc = T(0);
            for (uint j = 0u; j < i; j++) {
                const uint rj = reverse ? n - 1u - j : j;
                const uint a_at = transpose_a ? rj * n + ri : ri * n + rj;
                precise T term = load_elem(pc.a_addr, a_ty, a_base + a_at) * x.v[x_base + j];
                acc = term + acc;
            }
            const T diag = load_elem(pc.a_addr, a_ty, a_base + ri * n + ri);
            if (diag == T(0)) atomicOr(BufU32(pc.flag_addr).v[0], 1u);
            const uint b_at = transpose_b ? c * n + ri : ri * m + c;
            precise T r = nxv_div(load_elem(pc.b_addr, b_ty, b_base + b_at) - acc, diag);
            x.v[x_base + i] = r;
        }
        for (uint i = 0u; i < n; i++) {
            const uint ri = reverse ? n - 1u - i : i;
            const uint b_at = transpose_b ? c * n + ri : ri * m + c;
            store_elem(pc.out_addr, out_ty, b_base + b_at, x.v[x_base + i]);
        }
    }
}
