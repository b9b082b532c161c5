#version 460
// out[i] = pred[strided(i)] != 0 ? a[strided(i)] : b[strided(i)], elements moved as bits
// (a and b already have the output type). Broadcasting through zero strides.
// Defines: W8, W16, W32 or W64 (the element width).
#include "../common/raw.glsl"

layout(local_size_x = 256) in;

// OPS = the predicate's element type code.
layout(constant_id = 0) const uint OPS = 0u;

#define SEL_RANK 4

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 p_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint n;
    uint rank;
    uint dims[SEL_RANK];
    int p_strides[SEL_RANK];
    int a_strides[SEL_RANK];
    int b_strides[SEL_RANK];
} pc;

void main() {
    uint threads = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint start = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = start; i < pc.n; i += threads) {
        int ip = 0;
        int ia = 0;
        int ib = 0;
        uint rem = i;
        for (int d = int(pc.rank) - 1; d >= 0; d--) {
            uint dim = pc.dims[d];
            int c = int(rem % dim);
            ip += c * pc.p_strides[d];
            ia += c * pc.a_strides[d];
            ib += c * pc.b_strides[d];
            rem /= dim;
        }
        // Plain loads and stores only: 8/16-bit elements have storage, not arithmetic.
        if (is_nonzero(pc.p_addr, OPS, uint(ip))) {
            RawBuf(pc.out_addr).v[i] = RawBuf(pc.a_addr).v[uint(ia)];
        } else {
            RawBuf(pc.out_addr).v[i] = RawBuf(pc.b_addr).v[uint(ib)];
        }
    }
}
