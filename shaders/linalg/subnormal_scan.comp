#version 460
// Whether either f32 operand of a product holds a subnormal: writes 1 to `flag` if so
// (and nothing otherwise; the caller zeroes it). On drivers that flush f32 subnormals
// (NVIDIA's) sgemm.comp's products would flush them; the guarded exact launch that
// follows it in the stream (matmul.comp with `guard_addr`) reads this flag and recomputes
// the product in f64 only when it is set. No host wait is involved.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require

layout(local_size_x = 256) in;

layout(buffer_reference, std430, buffer_reference_align = 16) buffer Words4 { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer Flag { uint v; };

layout(push_constant) uniform Params {
    uvec2 flag_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint a_quads;  // f32 values of A / 4 (sgemm's operands are multiples of 4 long)
    uint b_quads;
} pc;

// A zero exponent field and a non-zero fraction: |bits| - 1 wraps zeros to the top.
bool any_subnormal(uvec4 w) {
    return any(lessThan((w & 0x7FFFFFFFu) - 1u, uvec4(0x007FFFFFu)));
}

void main() {
    uint stride = gl_NumWorkGroups.x * 256u;
    bool found = false;
    Words4 a = Words4(pc.a_addr);
    Words4 b = Words4(pc.b_addr);
    for (uint i = gl_GlobalInvocationID.x; i < pc.a_quads; i += stride) found = found || any_subnormal(a.v[i]);
    for (uint i = gl_GlobalInvocationID.x; i < pc.b_quads; i += stride) found = found || any_subnormal(b.v[i]);
    if (found) Flag(pc.flag_addr).v = 1u;
}
