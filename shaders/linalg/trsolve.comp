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
// With COMPLEX defined, values are complex (components in T) and MODES bit 3 conjugates
// A (Nx's transform_a: :conjugate, which conjugates without transposing).
#include "../common/types.glsl"
#include "../common/math.glsl"
#if defined(COMPLEX)
#include "../common/complex.glsl"
#define V CV
#define V_LOAD load_c
#define V_STORE store_c
#define V_MUL(a, b) cmul(a, b)
#define V_DIV(a, b) cdiv(a, b)
#define V_BUF BufCV
#else
#define V T
#define V_LOAD load_elem
#define V_STORE store_elem
#define V_MUL(a, b) ((a) * (b))
#define V_DIV(a, b) nxv_div(a, b)
#define V_BUF BufT
#endif

layout(local_size_x = 64) in;

// OPS = a_ty | b_ty << 8 | out_ty << 16
layout(constant_id = 0) const uint OPS = 0u;
// MODES: bit 0 transpose A, bit 1 reverse A's rows/columns and B's rows, bit 2 B is
// stored transposed (columns of B' are rows of B), bit 3 conjugate A (complex only).
layout(constant_id = 1) const uint MODES = 0u;

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uvec2 x_addr;  // scratch: batches * m * n values of V
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
#if defined(COMPLEX)
    const bool conjugate_a = (MODES & 8u) != 0u;
#define A_AT(k) (conjugate_a ? CV(1, -1) * load_c(pc.a_addr, a_ty, k) : load_c(pc.a_addr, a_ty, k))
#else
#define A_AT(k) load_elem(pc.a_addr, a_ty, k)
#endif
    const uint n = pc.n;
    const uint m = pc.m;
    V_BUF x = V_BUF(pc.x_addr);
    for (uint t = global_index(); t < pc.batches * m; t += global_threads()) {
        const uint batch = t / m;
        const uint c = t % m;
        const uint a_base = batch * n * n;
        const uint b_base = batch * n * m;
        const uint x_base = t * n;
        for (uint i = 0u; i < n; i++) {
            const uint ri = reverse ? n - 1u - i : i;
            precise V acc = V(0);
            for (uint j = 0u; j < i; j++) {
                const uint rj = reverse ? n - 1u - j : j;
                const uint a_at = transpose_a ? rj * n + ri : ri * n + rj;
                precise V term = V_MUL(A_AT(a_base + a_at), x.v[x_base + j]);
                acc = term + acc;
            }
            const V diag = A_AT(a_base + ri * n + ri);
            if (diag == V(0)) atomicOr(BufU32(pc.flag_addr).v[0], 1u);
            const uint b_at = transpose_b ? c * n + ri : ri * m + c;
            precise V r = V_DIV(V_LOAD(pc.b_addr, b_ty, b_base + b_at) - acc, diag);
            x.v[x_base + i] = r;
        }
        for (uint i = 0u; i < n; i++) {
            const uint ri = reverse ? n - 1u - i : i;
            const uint b_at = transpose_b ? c * n + ri : ri * m + c;
            V_STORE(pc.out_addr, out_ty, b_base + b_at, x.v[x_base + i]);
        }
    }
}
