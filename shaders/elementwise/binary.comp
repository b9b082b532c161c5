#version 460
// out[i] = op(a[strided(i)], b[strided(i)]) with broadcasting through zero strides.
// Operands are converted to the compute type T on load; comparisons and logical ops
// store 0/1 in the output type.
#include "../common/types.glsl"
#include "../common/math.glsl"
#if defined(F64_MATH_OP)
#include "../common/math64.glsl"
#include "../common/math64_trig.glsl"
#include "../common/math64_special.glsl"
#if defined(F32X)
#include "../common/math32x.glsl"
#endif
#endif

layout(local_size_x = 256) in;

// Specialization: the op and element types are baked into each pipeline, so the driver
// compiles straight-line code for one (op, types) pair (see `Kernels::get`).
layout(constant_id = 0) const uint OPS = 0u;
layout(constant_id = 1) const uint MODES = 0u;
// OPS = op | a_ty << 8 | b_ty << 16 | out_ty << 24

// MODES = a_mode | b_mode << 2, each 0: strided, 1: contiguous (read at i), 2: scalar;
// bit 4: the vectorised path (both contiguous, all types T, 16-byte aligned); bit 5: the
// vectorised broadcasting path (see main).

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 a_addr;
    uvec2 b_addr;
    uint n;
    uint rank;
    int a_off;
    int b_off;
    uint dims[MAX_RANK];
    int a_strides[MAX_RANK];
    int b_strides[MAX_RANK];
} pc;

#include "binary_ops.glsl"

void main() {
#if defined(F64_MATH_OP)
    dd_one = double(min(pc.n, 1u));  // 1 whenever the kernel runs (see dd.glsl)
#endif
#if defined(F32X)
    f32x_exp_init();  // f32x_exp's table
#endif
    const uint op = OPS & 0xFFu;
    const uint a_ty = (OPS >> 8) & 0xFFu;
    const uint b_ty = (OPS >> 16) & 0xFFu;
    const uint out_ty = (OPS >> 24) & 0xFFu;
    const uint a_mode = MODES & 3u;
    const uint b_mode = (MODES >> 2) & 3u;
#if defined(T4) && !defined(F64_MATH_OP)
    // Vectorised fast path (MODES bit 4, set by the host when the operands are contiguous,
    // stored as T and 16-byte aligned): one thread per four elements, one per tail element.
    if ((MODES & 16u) != 0u) {
        BufT4 a4 = BufT4(pc.a_addr);
        BufT4 b4 = BufT4(pc.b_addr);
        BufT4 o4 = BufT4(pc.out_addr);
        uint n4 = pc.n / 4u;
        for (uint i = global_index(); i < n4; i += global_threads()) {
            T4 x = a4.v[i];
            T4 y = b4.v[i];
            o4.v[i] = T4(apply(op, x.x, y.x), apply(op, x.y, y.y), apply(op, x.z, y.z), apply(op, x.w, y.w));
        }
        uint t = n4 * 4u + global_index();
        if (t < pc.n) BufT(pc.out_addr).v[t] = apply(op, BufT(pc.a_addr).v[t], BufT(pc.b_addr).v[t]);
        return;
    }
    // Broadcasting vectorised path (MODES bit 5, set by the host when every type is T, the
    // innermost dim is a multiple of 4 and each operand walks it with stride 1 - then its
    // other strides are multiples of 4 and its buffer 16-byte aligned - or stride 0): four
    // elements of one row per thread, offsets computed once for the four.
    if ((MODES & 32u) != 0u) {
        const uint last = pc.rank - 1u;
        const bool a_vec = pc.a_strides[last] == 1;
        const bool b_vec = pc.b_strides[last] == 1;
        BufT4 o4 = BufT4(pc.out_addr);
        uint n4 = pc.n / 4u;
        for (uint q = global_index(); q < n4; q += global_threads()) {
            uint rem = q * 4u;
            int ia = 0;
            int ib = 0;
            for (int d = int(last); d >= 0; d--) {
                uint dim = pc.dims[d];
                int c = int(rem % dim);
                ia += c * pc.a_strides[d];
                ib += c * pc.b_strides[d];
                rem /= dim;
            }
            T4 x = a_vec ? BufT4(pc.a_addr).v[uint(ia) / 4u] : T4(BufT(pc.a_addr).v[uint(ia)]);
            T4 y = b_vec ? BufT4(pc.b_addr).v[uint(ib) / 4u] : T4(BufT(pc.b_addr).v[uint(ib)]);
            o4.v[q] = T4(apply(op, x.x, y.x), apply(op, x.y, y.y), apply(op, x.z, y.z), apply(op, x.w, y.w));
        }
        return;
    }
#endif
#if !defined(F64_MATH_OP) || defined(F32X)  // a dd library function is inlined at each call: keep one
    // Fast path: every operand contiguous and stored exactly as T (f32 + f32 -> f32, ...).
    if (a_mode == 1u && b_mode == 1u && a_ty == CT_TY && b_ty == CT_TY && out_ty == CT_TY) {
        BufT a = BufT(pc.a_addr);
        BufT b = BufT(pc.b_addr);
        BufT o = BufT(pc.out_addr);
        for (uint i = global_index(); i < pc.n; i += global_threads()) {
            o.v[i] = apply(op, a.v[i], b.v[i]);
        }
        return;
    }
#endif
    for (uint i = global_index(); i < pc.n; i += global_threads()) {
        int ia = pc.a_off;
        int ib = pc.b_off;
        if (a_mode == 0u || b_mode == 0u) {
            uint rem = i;
            for (int d = int(pc.rank) - 1; d >= 0; d--) {
                uint dim = pc.dims[d];
                int c = int(rem % dim);
                ia += c * pc.a_strides[d];
                ib += c * pc.b_strides[d];
                rem /= dim;
            }
        }
        if (a_mode == 1u) ia = pc.a_off + int(i);
        if (a_mode == 2u) ia = pc.a_off;
        if (b_mode == 1u) ib = pc.b_off + int(i);
        if (b_mode == 2u) ib = pc.b_off;
        T a = load_elem(pc.a_addr, a_ty, uint(ia));
        T b = load_elem(pc.b_addr, b_ty, uint(ib));
#if defined(CT_I64)
        const bool a_big = a_ty == TY_U64 && a < T(0);
        const bool b_big = b_ty == TY_U64 && b < T(0);
        if (a_big != b_big) {
            store_elem(pc.out_addr, out_ty, i, big_apply(op, a, b, a_big, b_big));
            continue;
        }
#endif
        store_elem(pc.out_addr, out_ty, i, apply(op, a, b));
    }
}
