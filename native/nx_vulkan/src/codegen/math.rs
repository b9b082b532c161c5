//! The math library's functions in generated kernels (shaders/codegen/lib.comp's
//! `math_*`): which ops call them, and by which names. A kernel that calls one calls its
//! initialiser at the start of main, in every invocation.

use crate::dtype::Compute;
use crate::kernels::Kernel;
use crate::ops::elementwise::UnaryOp;

/// The math library's functions that generated kernels call (shaders/codegen/lib.comp),
/// unspecialised: each op's and the start of main's.
pub(super) const MATH: [&str; 4] = ["math_exp", "math_exp_fast", "math_init", "math_init_fast"];

/// Whether a unary op runs the math library in class `class`, as its unfused kernel does
/// (`UnaryOp::kernel`: f64, or f32 through f64, where lib.comp has `math_*`; `Group::check`
/// accepts exp there): exp, so far.
pub(super) fn is_math(op: UnaryOp, class: Compute) -> bool {
    op == UnaryOp::Exp && matches!(op.kernel(class), Kernel::F64Math(_) | Kernel::F32ViaF64(_))
}

/// exp's function and main's initialiser: with exp32.glsl's fast path where the unfused
/// f32 kernel takes it (`ops::exp_fast_path`).
pub(super) fn math_names() -> (&'static str, &'static str) {
    if crate::ops::exp_fast_path() {
        ("math_exp_fast", "math_init_fast")
    } else {
        ("math_exp", "math_init")
    }
}
