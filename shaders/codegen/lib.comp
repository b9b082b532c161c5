#version 460
// (the f64 library's [[dont_unroll]], in every class's module that includes it)
#extension GL_EXT_control_flow_attributes : enable
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
// The reductions' `identity_of` and `combine` (max and min fold in T, as reduce.comp).
#include "../reduce/ops.glsl"

// Sums and products accumulate as the unfused reductions do (`ops::float_accumulator`):
// in double for the f32 class on devices with f64, loaded and rounded through the bits
// (subnormals kept), else in T. `acc_*` are those accumulators' functions.
#if defined(EXACT_VIA_F64)
#define ACC double
ACC acc_load(T x) { return f32_widen(x); }
T acc_store(ACC a) { return f32_narrow(a); }
ACC acc_identity(uint op) { return op == R_PRODUCT ? 1.0lf : 0.0lf; }
ACC acc_combine(uint op, ACC a, ACC b) { return op == R_PRODUCT ? a * b : a + b; }
#else
#define ACC T
ACC acc_load(T x) { return x; }
T acc_store(ACC a) { return a; }
ACC acc_identity(uint op) { return identity_of(op); }
ACC acc_combine(uint op, ACC a, ACC b) { return combine(op, a, b); }
#endif

layout(local_size_x = 256) in;

// The push constants of every generated kernel: tensor addresses (inputs, then outputs),
// the element count, and words the kernel reads as it was generated to.
layout(push_constant) uniform Params {
    uvec2 addr[12];
    uint n;
    uint words[7];
} pc;

layout(constant_id = 0) const uint KEEP = 0u;

// The math library's functions, as the unary kernels run them (build/variants.rs
// F64_MATH): for the f64 class the f64 library's; for f32 on devices with f64
// (EXACT_VIA_F64) math32x.glsl's in double, rounded once for the output type, exp first
// through exp32.glsl's fast path in `math_exp_fast` (`ops::exp_fast_path`). Each kernel
// that calls one calls `math_init` (or `math_init_fast`) at the start of main in every
// invocation: dd_one, and the tables the workgroup shares. Only exp so far.
#if defined(CT_F64) || defined(EXACT_VIA_F64)
#include "../common/math64.glsl"
#endif
#if defined(EXACT_VIA_F64)
#include "../common/math32x.glsl"
#include "../common/exp32.glsl"
T math_exp(T x, uint out_ty) { return f32_for_store(f32x_exp(f32_widen(x)), out_ty); }
T math_exp_fast(T x, uint out_ty) {
    float y;
    [[dont_flatten]] if (out_ty == TY_F32 && exp32_fast(x, y)) return y;
    return math_exp(x, out_ty);
}
void math_init() {
    dd_one = double(min(pc.n, 1u));
    f32x_exp_init();
}
void math_init_fast() {
    math_init();
    exp32_init(float(min(pc.n, 1u)));
}
#elif defined(CT_F64)
T math_exp(T x, uint out_ty) { return f64_exp(x); }
T math_exp_fast(T x, uint out_ty) { return f64_exp(x); }
void math_init() { dd_one = double(min(pc.n, 1u)); }
void math_init_fast() { math_init(); }
#endif

// One function per op and per element type, each calling the generic one with a
// constant: drivers compile callees first, so each folds its switch once, and a kernel
// of many ops inlines small functions (calling `binary_apply` itself, a 100-op kernel took
// 2.2 s to build on an H100). The generated code calls `binary_<code>`, `unary_<code>`,
// `load_<type code>` and `store_<type code>`.
#define BINARY(c) T binary_##c(T a, T b) { return binary_apply(uint(c), a, b); }
#define UNARY(c) T unary_##c(T x, uint bits) { return unary_apply(uint(c), x, bits); }
#define LOAD(c) T load_##c(uvec2 addr, uint i) { return load_elem(addr, uint(c), i); }
#define STORE(c) void store_##c(uvec2 addr, uint i, T v) { store_elem(addr, uint(c), i, v); }
// The codes of BinaryOp, UnaryOp (ops/elementwise.rs) and DType (dtype.rs).
#define BINARY_CODES(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) \
    F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21) F(22) F(23)
#define UNARY_CODES(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) \
    F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19) F(20) F(21) F(22) F(23) F(24) F(25) \
    F(26) F(27) F(28) F(29) F(30) F(31) F(32) F(33) F(34) F(35)
#define TYPE_CODES(F) F(0) F(1) F(2) F(3) F(4) F(5) F(6) F(7) F(8) F(9) F(10) F(11) \
    F(12) F(13) F(14) F(15) F(16) F(17) F(18) F(19)
BINARY_CODES(BINARY)
UNARY_CODES(UNARY)
TYPE_CODES(LOAD)
TYPE_CODES(STORE)

#define CALL_BINARY(c) a = binary_##c(a, b);
#define CALL_UNARY(c) a = unary_##c(a, pc.words[5]);
#define CALL_LOAD(c) b = load_##c(pc.addr[4], i);
#define CALL_STORE(c) store_##c(pc.addr[5], i, a);

void main() {
    uint i = global_index();
    if (KEEP == 1u) {
        T a = load_elem(pc.addr[0], pc.words[0], i);
        T b = load_elem(pc.addr[1], pc.words[1], i);
        store_elem(pc.addr[2], pc.words[2], i, binary_apply(pc.words[3], a, b));
        store_elem(pc.addr[3], pc.words[2], i, unary_apply(pc.words[4], a, pc.words[5]));
        BINARY_CODES(CALL_BINARY)
        UNARY_CODES(CALL_UNARY)
        TYPE_CODES(CALL_LOAD)
        TYPE_CODES(CALL_STORE)
        ACC acc = acc_combine(pc.words[6], acc_identity(pc.words[6]), acc_load(a));
        store_elem(pc.addr[6], pc.words[2], i, acc_store(acc));
        store_elem(pc.addr[7], pc.words[2], i, combine(pc.words[6], identity_of(pc.words[6]), b));
#if defined(CT_F64) || defined(EXACT_VIA_F64)
        math_init();
        math_init_fast();
        store_elem(pc.addr[8], pc.words[2], i, math_exp(a, pc.words[2]));
        store_elem(pc.addr[9], pc.words[2], i, math_exp_fast(b, pc.words[2]));
#endif
#if defined(CT_I64)
        store_elem(pc.addr[4], pc.words[2], i, big_apply(pc.words[3], a, b, pc.n == 1u, pc.n == 2u));
#endif
    }
}
