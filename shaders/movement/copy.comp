#version 460
// Raw strided element copy over the index space `dims`:
//   out[out_off + sum(c_d * out_strides[d])] = in[in_off + sum(c_d * in_strides[d])]
// Transpose, broadcast, reverse, slice, put_slice, pad and concatenate are all this
// kernel with other strides; elements move as bits (NaN payloads, 64-bit values exact).
// Defines: W8, W16, W32, W64 or W128 (the element width; c128 moves as one element).
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
#elif defined(W64)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Buf { uvec2 v[]; };
#else
struct Word128 { uvec2 lo; uvec2 hi; };  // 16 bytes, 8-byte aligned (as c128 tensors are)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Buf { Word128 v[]; };
#endif

#define MAX_RANK 6

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint n;
    uint rank;
    int out_off;
    int in_off;
    uint dims[MAX_RANK];
    int strides[MAX_RANK];
    int out_strides[MAX_RANK];
} pc;

void main() {
    uint threads = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_WorkGroupSize.x;
    uint start = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = start; i < pc.n; i += threads) {
        int src = pc.in_off;
        int dst = pc.out_off;
        uint rem = i;
        for (int d = int(pc.rank) - 1; d >= 0; d--) {
            uint dim = pc.dims[d];
            int c = int(rem % dim);
            src += c * pc.strides[d];
            dst += c * pc.out_strides[d];
            rem /= dim;
        }
        Buf(pc.out_addr).v[uint(dst)] = Buf(pc.in_addr).v[uint(src)];
    }
}
