#version 460
// Fused programs (Nx.Vulkan.Compiler's fusion groups): element-wise ops and reductions
// over the trailing axes of a [rows, cols] domain, evaluated in registers by one kernel.
// The program is baked into the pipeline as specialization constants, so the driver
// compiles straight-line code for it; native/nx_vulkan/src/ops/fused.rs encodes it.
//
// Slot i computes register r[i] from earlier registers. Each reduction slot folds its
// operand over a row's columns in a pass of its own (a "phase"); later phases read its
// value. A phase re-evaluates the element-wise slots it needs from the inputs (the row
// is still in cache) rather than keeping per-column values. Every op rounds as the
// unfused kernel does (`precise`: no contraction into fma), so a fused program gives the
// op-by-op results.
#include "../common/types.glsl"
#include "../common/math.glsl"
#if defined(CT_F64) || defined(EXACT_VIA_F64)
#include "../common/math64.glsl"
#endif
#if defined(EXACT_VIA_F64)
#include "../common/math32x.glsl"
#include "../common/exp32.glsl"
#endif

layout(local_size_x = 256) in;

#define MAX_SLOTS 32
#define MAX_INPUTS 8
#define MAX_REDUCTIONS 4

// Op codes (bits 0-7 of OP_i): keep in sync with `FusedOp::code` in ops/fused.rs.
#define F_LOAD 1u
#define F_CONST 2u
#define F_SUM 3u
#define F_MAX 4u
#define F_MIN 5u
#define F_NEGATE 10u
#define F_ABS 11u
#define F_EXP 12u
#define F_LOG 13u
#define F_SQRT 14u
#define F_ADD 20u
#define F_SUBTRACT 21u
#define F_MULTIPLY 22u
#define F_DIVIDE 23u
#define F_MAX2 24u
#define F_MIN2 25u

// NSLOTS: slots used (the last one is the output). FLAGS: bit 0 the f32 math functions
// computed in double (EXACT_VIA_F64 modules), bit 1 the output is one value per row,
// bit 2 the loads need row and column (an input read per row or per column), bits 8-15
// the number of reductions, bits 16-23 each phase's reduction op (2 bits: 0 sum, 1 max,
// 2 min). Bit 3: one input's row is read into shared memory once per row and every phase
// reads it there (rows of at most ROW_CACHE elements); bits 24-27: that input. Bit 5:
// exact exps (bit 0) try exp32.glsl's f32 fast path first (its table is filled at the
// start; ops/fused.rs `exp_fast_path`). Bit 4: the slot whose OP has bit 24 set (the
// operand of a reduction) overwrites that input's row in shared memory with its values
// in the phase in bits 28-29, and later phases read them there instead of computing them
// again: softmax's exp(x - max) is evaluated once, not twice. ops/fused.rs sets it only
// where no later read needs the input itself. (A shared array of its own for these
// values, sized by a specialization constant, made every fused program slower on the
// H200: softmax rows of 4096 took 246-297 us, not 166.) Bit 6: the first reduction
// folds the cached input itself, during the fill (fill_row_cache). Bit 7
// (EXACT_VIA_F64): each folded reduction's reciprocal is kept in double (rcpv) for the
// divisions by it that OP bit 25 marks. Bit 30 (EXACT_VIA_F64): the program has an exp;
// the workgroup fills f32x_exp's table (math32x.glsl) first.
layout(constant_id = 0) const uint NSLOTS = 1u;
layout(constant_id = 1) const uint FLAGS = 0u;

// Per slot: OP (op | phase << 8 | reduction index << 16: the slot runs in phases >= its
// phase; a reduction accumulates in phase == its index; bit 24: the kept operand of
// FLAGS bit 4; bit 25: a division by the folded reduction whose index is in bits 26-27),
// ARG (a | b << 8 | input << 16 | access mode << 24, modes 0 full, 1 per row, 2 per
// column, 3 scalar) and a constant's bits (LO, HI: an f32's bits in LO, an f64's in
// both).
#define DECL_SLOT(i, a, b, c, d) \
    layout(constant_id = a) const uint OP_##i = 0u; \
    layout(constant_id = b) const uint ARG_##i = 0u; \
    layout(constant_id = c) const uint LO_##i = 0u; \
    layout(constant_id = d) const uint HI_##i = 0u;
DECL_SLOT(0, 2, 3, 4, 5)
DECL_SLOT(1, 6, 7, 8, 9)
DECL_SLOT(2, 10, 11, 12, 13)
DECL_SLOT(3, 14, 15, 16, 17)
DECL_SLOT(4, 18, 19, 20, 21)
DECL_SLOT(5, 22, 23, 24, 25)
DECL_SLOT(6, 26, 27, 28, 29)
DECL_SLOT(7, 30, 31, 32, 33)
DECL_SLOT(8, 34, 35, 36, 37)
DECL_SLOT(9, 38, 39, 40, 41)
DECL_SLOT(10, 42, 43, 44, 45)
DECL_SLOT(11, 46, 47, 48, 49)
DECL_SLOT(12, 50, 51, 52, 53)
DECL_SLOT(13, 54, 55, 56, 57)
DECL_SLOT(14, 58, 59, 60, 61)
DECL_SLOT(15, 62, 63, 64, 65)
DECL_SLOT(16, 66, 67, 68, 69)
DECL_SLOT(17, 70, 71, 72, 73)
DECL_SLOT(18, 74, 75, 76, 77)
DECL_SLOT(19, 78, 79, 80, 81)
DECL_SLOT(20, 82, 83, 84, 85)
DECL_SLOT(21, 86, 87, 88, 89)
DECL_SLOT(22, 90, 91, 92, 93)
DECL_SLOT(23, 94, 95, 96, 97)
DECL_SLOT(24, 98, 99, 100, 101)
DECL_SLOT(25, 102, 103, 104, 105)
DECL_SLOT(26, 106, 107, 108, 109)
DECL_SLOT(27, 110, 111, 112, 113)
DECL_SLOT(28, 114, 115, 116, 117)
DECL_SLOT(29, 118, 119, 120, 121)
DECL_SLOT(30, 122, 123, 124, 125)
DECL_SLOT(31, 126, 127, 128, 129)

layout(push_constant) uniform Params {
    uvec2 out_addr;
    uvec2 in_addr[MAX_INPUTS];
    uint rows;
    uint cols;
} pc;

#if defined(CT_F64) || defined(EXACT_VIA_F64)
#define ACC double  // f32 sums accumulate in f64, as the unfused reduction does
#else
#define ACC T
#endif

ACC acc_of(T x) {
#if defined(EXACT_VIA_F64)
    return f32_widen(x);
#else
    return x;
#endif
}

T acc_round(ACC a) {
#if defined(EXACT_VIA_F64)
    return f32_narrow(a);
#else
    return a;
#endif
}

ACC red_identity(uint op) {
    if (op == 1u) return ACC(-1.0 / 0.0);
    if (op == 2u) return ACC(1.0 / 0.0);
    return ACC(0);
}

// NaN propagates through max and min, as in the reduce kernels.
ACC red_combine(uint op, ACC a, ACC b) {
    if (op == 1u) return (isnan(a) || a > b) ? a : b;
    if (op == 2u) return (isnan(a) || a < b) ? a : b;
    precise ACC s = a + b;
    return s;
}

T fused_exp(T x) {
#if defined(CT_F64)
    return f64_exp(x);
#elif defined(EXACT_VIA_F64)
    if ((FLAGS & 1u) != 0u) {
        float y;  // the f32 fast path where it proves its rounding (exp32.glsl; FLAGS bit 5)
        [[dont_flatten]] if ((FLAGS & 32u) != 0u && exp32_fast(x, y)) return y;
        [[dont_flatten]] if (!(abs(x) < 87.0)) return f32_narrow(f32x_exp(f32_widen(x)));
        return f32x_exp_normal(x);
    }
    return exp(x);
#else
    return exp(x);
#endif
}

T fused_log(T x) {
#if defined(CT_F64)
    return f64_log(x);
#elif defined(EXACT_VIA_F64)
    if ((FLAGS & 1u) != 0u) return f32_narrow(f32x_log(f32_widen(x)));
    return log(x);
#else
    return log(x);
#endif
}

#if defined(CT_F64)
#define ROW_CACHE 2048u
#else
#define ROW_CACHE 4096u
#endif
shared T row_cache[ROW_CACHE];
#define OPERAND_PHASE ((FLAGS >> 28) & 3u)

T load_input(uint arg, uint row, uint col) {
    uint which = (arg >> 16) & 0xFFu;
    uint mode = arg >> 24;
    // The cached input's row was read into shared memory before the first phase.
    if ((FLAGS & 8u) != 0u && mode == 0u && which == ((FLAGS >> 24) & 15u)) return row_cache[col];
    uint at = mode == 0u ? row * pc.cols + col : mode == 1u ? row : mode == 2u ? col : 0u;
    return BufT(pc.in_addr[which]).v[at];
}

// Reads row `row` of the cached input into shared memory, eight loads in flight per
// thread (a loop of one load and one use would wait for each load in turn). Thread lid
// stores the columns lid + 256 k, the ones it reads back in every phase: no barrier.
// With FLAGS bit 6 the first reduction folds the cached input itself: the thread folds
// its columns here, in the order of a phase's column loop, and phase 0 has no loop.
ACC fill_row_cache(uint row, uint lid) {
    BufT src = BufT(pc.in_addr[(FLAGS >> 24) & 15u]);
    const bool fold = (FLAGS & 64u) != 0u;
    const uint op = (FLAGS >> 16) & 3u;
    ACC acc = red_identity(op);
    uint base = row * pc.cols;
    uint c = lid;
    for (; c + 1792u < pc.cols; c += 2048u) {
        T v[8];
        for (uint k = 0u; k < 8u; k++) v[k] = src.v[base + c + 256u * k];
        for (uint k = 0u; k < 8u; k++) row_cache[c + 256u * k] = v[k];
        if (fold) {
            for (uint k = 0u; k < 8u; k++) acc = red_combine(op, acc, acc_of(v[k]));
        }
    }
    for (; c < pc.cols; c += 256u) {
        T v = src.v[base + c];
        row_cache[c] = v;
        if (fold) acc = red_combine(op, acc, acc_of(v));
    }
    return acc;
}

T constant_of(uint lo, uint hi) {
#if defined(CT_F64)
    return packDouble2x32(uvec2(lo, hi));
#else
    return uintBitsToFloat(lo);
#endif
}

#if defined(EXACT_VIA_F64)
// 1 / b in double for each folded reduction b that a division reads (OP bit 25).
double rcpv[MAX_REDUCTIONS];

// a / b for f32 a and b, given rcp = RN64(1 / b): a * rcp in double, rounded to f32, is
// a / b rounded to f32 wherever that quotient is normal. a * rcp is within 2^-52 of a / b
// (relative: two roundings). A rounding boundary t of f32 (an odd multiple of half an
// ulp: 25 significant bits) has b t an integer of at most 49 bits in units of which a is
// an integer too, and a != b t (a has 24 bits), so |a / b - t| > 2^-49 t: a * rcp lies on
// a / b's side of every boundary. Zero or subnormal operands or quotient take nxv_div's
// path, as there. tests/fused_division.rs checks the claim on the host and the kernel
// against f64 division rounded once.
float div_by_reciprocal(float a, float b, double rcp) {
    float q = float(double(a) * rcp);
    [[dont_flatten]] if (f32_may_flush(q, a, b)) {
        q = f32_narrow(f32_widen(a) / f32_widen(b));
    }
    return q;
}
#endif

// One element-wise slot.
T eval_slot(uint op, uint arg, uint lo, uint hi, T a, T b, uint row, uint col) {
    precise T r;
    switch (op & 0xFFu) {
    case F_LOAD: r = load_input(arg, row, col); break;
    case F_CONST: r = constant_of(lo, hi); break;
#if defined(CT_F32) && defined(EXACT_VIA_F64)
    // Subnormals as themselves on drivers that flush them (see f32s_add). On the H200
    // this took the engine's fused softmax from 140 to 162 us (raw
    // nvidia-h200-2026-12-01r's A/B); the 4x slower softmax from Elixir that once had it
    // taken out was fresh output buffers, not this (raw nvidia-h200-2026-12-01u).
    case F_NEGATE: r = f32s_negate(a); break;
    case F_ABS: r = f32s_abs(a); break;
    case F_ADD: r = f32s_add(a, b); break;
    case F_SUBTRACT: r = f32s_sub(a, b); break;
    case F_MULTIPLY: r = f32s_mul(a, b); break;
    case F_MAX2: r = (isnan(a) || f32s_less(b, a) || f32s_equal(a, b)) ? a : b; break;
    case F_MIN2: r = (isnan(a) || f32s_less(a, b) || f32s_equal(a, b)) ? a : b; break;
#else
    case F_NEGATE: r = -a; break;
    case F_ABS: r = abs(a); break;
    case F_ADD: r = a + b; break;
    case F_SUBTRACT: r = a - b; break;
    case F_MULTIPLY: r = a * b; break;
    case F_MAX2: r = (isnan(a) || a >= b) ? a : b; break;  // ties: the first (Nx)
    case F_MIN2: r = (isnan(a) || a <= b) ? a : b; break;
#endif
    case F_EXP: r = fused_exp(a); break;
    case F_LOG: r = fused_log(a); break;
    case F_SQRT: r = nxv_sqrt(a); break;
    case F_DIVIDE:
#if defined(EXACT_VIA_F64)
        // A divisor that is a folded reduction: through its reciprocal (OP bit 25).
        if (((op >> 25) & 1u) != 0u) {
            r = div_by_reciprocal(a, b, rcpv[(op >> 26) & 3u]);
            break;
        }
#endif
        r = nxv_div(a, b);
        break;
    default: r = T(0);
    }
    return r;
}

bool is_reduction(uint op) {
    uint code = op & 0xFFu;
    return code == F_SUM || code == F_MAX || code == F_MIN;
}

// Slot i in phase `phase`: reductions already folded read their row value; the one of
// this phase folds its operand into acc; element-wise slots of this phase or earlier run.
#define SLOT(i) \
    if (i < NSLOTS) { \
        if (is_reduction(OP_##i)) { \
            uint ridx = (OP_##i >> 16) & 0xFFu; \
            if (ridx < phase) r[i] = rowv[ridx]; \
            else if (ridx == phase) acc = red_combine(red_op, acc, acc_of(r[ARG_##i & 0xFFu])); \
        } else if (((OP_##i >> 8) & 0xFFu) <= phase) { \
            const bool kept = (FLAGS & 16u) != 0u && ((OP_##i >> 24) & 1u) != 0u; \
            if (kept && phase > OPERAND_PHASE) { \
                r[i] = row_cache[col]; \
            } else { \
                r[i] = eval_slot(OP_##i, ARG_##i, LO_##i, HI_##i, r[ARG_##i & 0xFFu], \
                                 r[(ARG_##i >> 8) & 0xFFu], row, col); \
                if (kept && phase == OPERAND_PHASE) row_cache[col] = r[i]; \
            } \
        } \
    }

#define ALL_SLOTS \
    SLOT(0) \
    SLOT(1) \
    SLOT(2) \
    SLOT(3) \
    SLOT(4) \
    SLOT(5) \
    SLOT(6) \
    SLOT(7) \
    SLOT(8) \
    SLOT(9) \
    SLOT(10) \
    SLOT(11) \
    SLOT(12) \
    SLOT(13) \
    SLOT(14) \
    SLOT(15) \
    SLOT(16) \
    SLOT(17) \
    SLOT(18) \
    SLOT(19) \
    SLOT(20) \
    SLOT(21) \
    SLOT(22) \
    SLOT(23) \
    SLOT(24) \
    SLOT(25) \
    SLOT(26) \
    SLOT(27) \
    SLOT(28) \
    SLOT(29) \
    SLOT(30) \
    SLOT(31) \

shared ACC partial[256];

// Elements per workgroup of an element-wise program.
#define TILE 1024u

void main() {
#if defined(CT_F64) || defined(EXACT_VIA_F64)
    dd_one = double(min(pc.cols, 1u));  // 1 whenever the kernel runs (see dd.glsl)
#endif
#if defined(EXACT_VIA_F64)
    if ((FLAGS & (1u << 30)) != 0u) f32x_exp_init();  // f32x_exp's table (FLAGS bit 30)
    // exp32.glsl's table, for programs that take an exact exp (FLAGS bit 5).
    if ((FLAGS & 32u) != 0u) exp32_init(float(min(pc.cols, 1u)));
#endif
    const uint nred = (FLAGS >> 8) & 0xFFu;
    const bool out_row = (FLAGS & 2u) != 0u;
    const bool needs_rc = (FLAGS & 4u) != 0u;
    // Element-wise programs take tiles of the flattened domain; programs with reductions
    // (or one value per row) take one row per workgroup.
    const bool elementwise = nred == 0u && !out_row;
    const uint out_slot = NSLOTS - 1u;
    BufT o = BufT(pc.out_addr);
    T r[MAX_SLOTS];
    T rowv[MAX_REDUCTIONS];
    for (uint k = 0u; k < MAX_SLOTS; k++) r[k] = T(0);
    for (uint k = 0u; k < MAX_REDUCTIONS; k++) rowv[k] = T(0);
#if defined(EXACT_VIA_F64)
    for (uint k = 0u; k < MAX_REDUCTIONS; k++) rcpv[k] = 0.0lf;
#endif
    ACC acc = ACC(0);
    uint red_op = 0u;

    // The slots are written out once (ALL_SLOTS below): drivers inline every library
    // function at each expansion before the program's constants remove the unused ones.
    uint lid = gl_LocalInvocationID.x;
    uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
    uint n = pc.rows * pc.cols;
    uint units = elementwise ? (n + TILE - 1u) / TILE : pc.rows;
    for (uint u = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x; u < units; u += groups) {
        ACC filled = ACC(0);
        if (!elementwise && (FLAGS & 8u) != 0u) filled = fill_row_cache(u, lid);
        // Unrolled by the driver once the program's constants fix nred: every test of
        // `phase` in the slots (which run, which reduction folds, whether the phase
        // writes) is then settled at compile time, and each phase is straight-line code.
        // As a loop, these tests ran per element: H200 fused softmax 130 -> 95 us (raw
        // nvidia-h200-2026-12-02a). Copies of the phase in the source instead (a 4 MiB
        // module) made NVIDIA's pipelines 3-4x slower.
        [[unroll]] for (uint phase = 0u; phase <= nred; phase++) {
            if (phase < nred) {
                red_op = (FLAGS >> (16u + 2u * phase)) & 3u;
                acc = red_identity(red_op);
            }
            // Phase 0's fold already done by the fill (FLAGS bit 6).
            const bool folded = phase == 0u && (FLAGS & 64u) != 0u;
            if (folded) acc = filled;
            uint begin = elementwise ? u * TILE : 0u;
            uint end = elementwise ? min(n, begin + TILE)
                : (phase == nred && out_row) ? 1u
                : folded ? 0u
                : pc.cols;
            for (uint j = begin + lid; j < end; j += 256u) {
                uint row = elementwise ? (needs_rc ? j / pc.cols : 0u) : u;
                uint col = elementwise ? (needs_rc ? j - row * pc.cols : j) : j;
                ALL_SLOTS
                if (phase == nred) o.v[elementwise ? j : out_row ? row : row * pc.cols + col] = r[out_slot];
            }
            if (phase < nred) {
                partial[lid] = acc;
                barrier();
                for (uint s = 128u; s > 0u; s >>= 1) {
                    if (lid < s) partial[lid] = red_combine(red_op, partial[lid], partial[lid + s]);
                    barrier();
                }
                T v = acc_round(partial[0]);
                // The row value (and its reciprocal, FLAGS bit 7), stored by constant
                // indices as before: private arrays indexed by a variable may go to memory.
#if defined(EXACT_VIA_F64)
                double rcp = (FLAGS & 128u) != 0u ? 1.0lf / f32_widen(v) : 0.0lf;
#define KEEP_ROW_VALUE(k) { rowv[k] = v; rcpv[k] = rcp; }
#else
#define KEEP_ROW_VALUE(k) rowv[k] = v;
#endif
                if (phase == 0u) KEEP_ROW_VALUE(0)
                else if (phase == 1u) KEEP_ROW_VALUE(1)
                else if (phase == 2u) KEEP_ROW_VALUE(2)
                else KEEP_ROW_VALUE(3)
#undef KEEP_ROW_VALUE
                barrier();
            }
        }
    }
}
