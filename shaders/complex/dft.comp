#version 460
// Discrete Fourier transform along one axis, the input viewed as [outer, len, inner] and
// the output as [outer, n, inner]:
//   out[o, k, i] = scale * sum_{j < min(len, n)} in[o, j, i] * w[(j * k) mod n]
// with w[m] = exp(-2 pi i m / n) from a table the host computes in f64 (conjugated for
// the inverse, whose scale is 1/n). Inputs shorter than n are zero-padded, longer ones
// truncated (Nx's :length). Parts with magnitude <= eps become 0, as in Nx.BinaryBackend.
// One invocation per output element, O(n) each.
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
} pc;

#include "../common/complex.glsl"

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
        CV acc = CV(T(0), T(0));
        uint m = 0u;  // (j * k) mod n
        for (uint j = 0u; j < terms; j++) {
            CV x = load_c(pc.in_addr, in_ty, base + j * pc.inner);
            CV w = table.w[m];
            if (inverse) w.y = -w.y;
            acc += cmul(x, w);
            m += k;
            if (m >= pc.n) m -= pc.n;
        }
        if (inverse) acc /= T(pc.n);
        if (abs(acc.x) <= eps) acc.x = T(0);
        if (abs(acc.y) <= eps) acc.y = T(0);
        store_c(pc.out_addr, out_ty, o, acc);
    }
}
