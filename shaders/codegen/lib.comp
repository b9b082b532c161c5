#version 460
// The function library of generated kernels (native/nx_vulkan/src/codegen): the typed
// loads and stores of types.glsl and the element-wise ops of the static kernels, in one
// compute type T per module, compiled unoptimised so that each stays a function the
// generated code can call. A generated kernel is this module with `main` replaced
// (codegen/splice.rs), so fusing ops changes no result: each op runs the code of its
// unfused kernel.
//
// glslang emits only the functions that `main` reaches, so `main` calls each of them
// behind a specialization constant that is never set; the generated module drops it.
#include "../common/types.glsl"
#include "../common/math.glsl"

// `apply` of each element-wise family, renamed so that both fit in one module.
#define apply unary_apply
#include "../elementwise/unary_ops.glsl"
#undef apply
#define apply binary_apply
#include "../elementwise/binary_ops.glsl"
#undef apply

layout(local_size_x = 256) in;

// The push constants of every generated kernel: tensor addresses (inputs, then outputs),
// the element count, and words the kernel reads as it was generated to.
layout(push_constant) uniform Params {
    uvec2 addr[12];
    uint n;
    uint words[7];
} pc;

layout(constant_id = 0) const uint KEEP = 0u;

void main() {
    uint i = global_index();
    if (KEEP == 1u) {
        T a = load_elem(pc.addr[0], pc.words[0], i);
        T b = load_elem(pc.addr[1], pc.words[1], i);
        store_elem(pc.addr[2], pc.words[2], i, binary_apply(pc.words[3], a, b));
        store_elem(pc.addr[3], pc.words[2], i, unary_apply(pc.words[4], a, pc.words[5]));
#if defined(CT_I64)
        store_elem(pc.addr[4], pc.words[2], i, big_apply(pc.words[3], a, b, pc.n == 1u, pc.n == 2u));
#endif
    }
}
