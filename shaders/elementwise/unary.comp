#version 460
// out[i] = op(in[strided(i)]): unary math, as_type (op 0 with other in/out types) and the
// predicates. The input is read through `dims`/`strides`, so a transpose or broadcast
// feeding an op costs no extra pass.
#include "../common/types.glsl"
#include "../common/math.glsl"
#if defined(F64_MATH_OP)
#include "../common/math64.glsl"
#include "../common/math64_trig.glsl"
#include "../common/math64_special.glsl"
#if defined(F32X)
#include "../common/math32x.glsl"
#if defined(EXP32)
#include "../common/exp32.glsl"
#endif
#endif
#endif

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
layout(constant_id = 1) const uint MODES = 0u;  // 1: the input is read at the output index (contiguous)
// OPS = op | in_ty << 8 | out_ty << 16


layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr;
    uint n;
    uint rank;
    int in_off;
    uint dims[MAX_RANK];
    int strides[MAX_RANK];
} pc;

#include "unary_ops.glsl"

void main() {
#if defined(F64_MATH_OP)
    dd_one = double(min(pc.n, 1u));  // 1 whenever the kernel runs (see dd.glsl)
#endif
#if defined(F32X)
    f32x_exp_init();  // f32x_exp's table
#endif
#if defined(EXP32)
    exp32_init(float(min(pc.n, 1u)));
#endif
    const uint op = OPS & 0xFFu;
    const uint in_ty = (OPS >> 8) & 0xFFu;
    const uint out_ty = (OPS >> 16) & 0xFFu;
    uint bits = type_bits(in_ty);
#if defined(T4) && !defined(F64_MATH_OP)
    // Vectorised fast path (MODES 17, set by the host for contiguous, 16-byte aligned
    // input and output stored as T): one thread per four elements, one per tail element.
    if (MODES == 17u) {
        BufT4 src4 = BufT4(pc.in_addr);
        BufT4 dst4 = BufT4(pc.out_addr);
        uint n4 = pc.n / 4u;
        for (uint i = global_index(); i < n4; i += global_threads()) {
            T4 x = src4.v[i];
            dst4.v[i] = T4(apply(op, x.x, bits), apply(op, x.y, bits), apply(op, x.z, bits), apply(op, x.w, bits));
        }
        uint t = n4 * 4u + global_index();
        if (t < pc.n) BufT(pc.out_addr).v[t] = apply(op, BufT(pc.in_addr).v[t], bits);
        return;
    }
#endif
#if !defined(F64_MATH_OP) || defined(F32X)  // a dd library function is inlined at each call: keep one
    // Fast path: contiguous input and output both stored exactly as T.
    if (MODES == 1u && in_ty == CT_TY && out_ty == CT_TY) {
        BufT src = BufT(pc.in_addr);
        BufT dst = BufT(pc.out_addr);
        for (uint i = global_index(); i < pc.n; i += global_threads()) {
            dst.v[i] = apply(op, src.v[uint(pc.in_off) + i], bits);
        }
        return;
    }
#endif
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        int src = pc.in_off + int(i);
        if (MODES != 1u) {
            src = pc.in_off;
            uint rem = i;
            for (int d = int(pc.rank) - 1; d >= 0; d--) {
                uint dim = pc.dims[d];
                src += int(rem % dim) * pc.strides[d];
                rem /= dim;
            }
        }
        store_elem(pc.out_addr, out_ty, i, apply(op, load_elem(pc.in_addr, in_ty, uint(src)), bits));
    }
}
