#version 460
// Discrete Fourier transform along one axis, the input viewed as [outer, len, inner] and
// the output as [outer, n, inner]:
//   out[o, k, i] = scale * sum_{j < min(len, n)} in[o, j, i] * w[(j * k) mod n]
// with w[m] = exp(-2 pi i m / n) from a table the host computes in f64 (conjugated for
// the inverse, whose scale is 1/n). Inputs shorter than n are zero-padded, longer ones
// truncated (Nx's :length). Parts with magnitude <= eps become 0, as in Nx.BinaryBackend.
// One invocation per output element, O(n) each. Sums of more terms than one launch may
// loop over (lavapipe stops shader loops after ~65k iterations) run as several launches
// over ranges of j: each continues the running sum of the one before from a scratch
// buffer, in the same order as one launch would, and only the last scales and stores.
#include "../common/types.glsl"

layout(local_size_x = 256) in;

layout(constant_id = 0) const uint OPS = 0u;  // inverse | in_ty << 8 | out_ty << 16

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uvec2 table_addr;
    uint total;  // output elements
    uint n;      // transform length
    uint len;    // input length along the axis
    uint inner;  // elements after the axis
    uvec2 eps;   // f64 bits (f32 bits in x for an f32 kernel)
    uvec2 part_addr;  // running sums between launches (compute type), when split
    uint j_begin;     // this launch's terms: j_begin <= j < j_end
    uint j_end;
    uint split;       // bit 0: continue the sum in part; bit 1: store it there, not out
} pc;

#include "../common/complex.glsl"

// (a * b) mod n for a, b < n < 2^31, without 64-bit integers.
uint mulmod(uint a, uint b, uint n) {
    uint r = 0u;
    for (; b > 0u; b >>= 1) {
        if ((b & 1u) != 0u) {
            r += a;
            if (r >= n) r -= n;
        }
        a += a;
        if (a >= n) a -= n;
    }
    return r;
}

#if defined(CT_F64)
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Table { dvec2 w[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Table { vec2 w[]; };
#endif

void main() {
    const bool inverse = (OPS & 1u) != 0u;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    const uint terms = min(pc.len, pc.n);
#if defined(CT_F64)
    const T eps = packDouble2x32(pc.eps);
#else
    const T eps = uintBitsToFloat(pc.eps.x);
#endif
    Table table = Table(pc.table_addr);
    for (uint o = global_index(); o < pc.total; o += global_threads()) {
        uint i = o % pc.inner;
        uint k = (o / pc.inner) % pc.n;
        uint outer = o / (pc.inner * pc.n);
        uint base = outer * pc.len * pc.inner + i;
        const uint j_end = min(terms, pc.j_end);
        CV acc = (pc.split & 1u) != 0u ? BufCV(pc.part_addr).v[o] : CV(T(0), T(0));
        uint m = mulmod(pc.j_begin % pc.n, k, pc.n);  // (j * k) mod n
        for (uint j = pc.j_begin; j < j_end; j++) {
            CV x = load_c(pc.in_addr, in_ty, base + j * pc.inner);
            CV w = table.w[m];
            if (inverse) w.y = -w.y;
            acc += cmul(x, w);
            m += k;
            if (m >= pc.n) m -= pc.n;
        }
        if ((pc.split & 2u) != 0u) {
            BufCV(pc.part_addr).v[o] = acc;
            continue;
        }
        if (inverse) acc /= T(pc.n);
        if (abs(acc.x) <= eps) acc.x = T(0);
        if (abs(acc.y) <= eps) acc.y = T(0);
        store_c(pc.out_addr, out_ty, o, acc);
    }
}
