#version 460
// Tiled strided copy for layouts where the input and the output are contiguous along
// different axes (transposes): a 32x32 tile is read along the input's contiguous axis B
// and written along the output's contiguous axis A through shared memory, so both sides
// are coalesced. Up to four further "batch" axes are walked by the z dimension.
//   out[out_off + a + b*out_stride_b + batch] = in[in_off + a*in_stride_a + b + batch]
// Defines: W8, W16, W32, W64 or W128 (the element width).
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_16bit_storage : require

#define TILE 32
#define ROWS 8
layout(local_size_x = TILE, local_size_y = ROWS) in;

#if defined(W8)
layout(buffer_reference, std430, buffer_reference_align = 1) buffer Buf { uint8_t v[]; };
#define E uint
#define LOAD(x) uint(x)
#define STORE(x) uint8_t(x)
#elif defined(W16)
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Buf { uint16_t v[]; };
#define E uint
#define LOAD(x) uint(x)
#define STORE(x) uint16_t(x)
#elif defined(W32)
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Buf { uint v[]; };
#define E uint
#define LOAD(x) (x)
#define STORE(x) (x)
#elif defined(W64)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Buf { uvec2 v[]; };
#define E uvec2
#define LOAD(x) (x)
#define STORE(x) (x)
#else
struct Word128 { uvec2 lo; uvec2 hi; };  // 16 bytes, 8-byte aligned (as c128 tensors are)
layout(buffer_reference, std430, buffer_reference_align = 8) buffer Buf { Word128 v[]; };
#define E Word128
#define LOAD(x) (x)
#define STORE(x) (x)
#endif

#define MAX_BATCH 4

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint dim_a;
    uint dim_b;
    int in_stride_a;
    int out_stride_b;
    int in_off;
    int out_off;
    uint batch;        // product of the batch dims
    uint batch_rank;
    uint batch_dims[MAX_BATCH];
    int in_batch_strides[MAX_BATCH];
    int out_batch_strides[MAX_BATCH];
} pc;

shared E tile[TILE][TILE + 1];

void main() {
    Buf src = Buf(pc.in_addr);
    Buf dst = Buf(pc.out_addr);
    uint tx = gl_LocalInvocationID.x;
    uint ty = gl_LocalInvocationID.y;
    uint a0 = gl_WorkGroupID.y * TILE;
    uint b0 = gl_WorkGroupID.x * TILE;
    for (uint z = gl_WorkGroupID.z; z < pc.batch; z += gl_NumWorkGroups.z) {
        int in_base = pc.in_off;
        int out_base = pc.out_off;
        uint rem = z;
        for (int d = int(pc.batch_rank) - 1; d >= 0; d--) {
            uint dim = pc.batch_dims[d];
            int c = int(rem % dim);
            in_base += c * pc.in_batch_strides[d];
            out_base += c * pc.out_batch_strides[d];
            rem /= dim;
        }
        // Read: consecutive threads take consecutive b (the input's contiguous axis).
        uint b = b0 + tx;
        for (uint k = ty; k < TILE; k += ROWS) {
            uint a = a0 + k;
            if (a < pc.dim_a && b < pc.dim_b) {
                tile[k][tx] = LOAD(src.v[uint(in_base + int(a) * pc.in_stride_a + int(b))]);
            }
        }
        barrier();
        // Write: consecutive threads take consecutive a (the output's contiguous axis).
        uint a = a0 + tx;
        for (uint k = ty; k < TILE; k += ROWS) {
            uint bb = b0 + k;
            if (a < pc.dim_a && bb < pc.dim_b) {
                dst.v[uint(out_base + int(a) + int(bb) * pc.out_stride_b)] = STORE(tile[tx][k]);
            }
        }
        barrier();
    }
}
