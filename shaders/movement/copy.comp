#version 460
// Raw element copy: out[i] = in[offset + sum(coord_d(i) * strides[d])].
// Transpose, broadcast, reverse, slice and concatenation pieces are all this kernel with
// other strides; elements move as bits (NaN payloads and 64-bit values stay exact).
// Defines: W8, W16, W32 or W64 (the element width).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

layout(local_size_x = 256) in;

#if defined(W8)
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Buf { uint8_t v[]; };
#elif defined(W16)
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Buf { uint16_t v[]; };
#elif defined(W32)
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Buf { uint v[]; };
#else
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Buf { uvec2 v[]; };
#endif

#define MAX_RANK 6

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint n;
    uint rank;
    uint out_off;  // element offset of the output (writing into a slice of a larger tensor)
    int in_off;
    uint dims[MAX_RANK];
    int strides[MAX_RANK];
} pc;

void main() {
    uint threads = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint start = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = start; i < pc.n; i += threads) {
        int src = pc.in_off;
        uint rem = i;
        for (int d = int(pc.rank) - 1; d >= 0; d--) {
            uint dim = pc.dims[d];
            src += int(rem % dim) * pc.strides[d];
            rem /= dim;
        }
        Buf(pc.out_addr).v[pc.out_off + i] = Buf(pc.in_addr).v[uint(src)];
    }
}
