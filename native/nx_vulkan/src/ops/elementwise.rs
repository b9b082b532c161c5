//! Element-wise ops as tables: each Nx op maps to a kernel op code, a rule for the type it
//! computes in, and the compute classes that implement it.

use super::layout::{broadcast_strides, contiguous_strides, simplify};
use super::{access_mode, element_grid, f32_via_f64, launch, read, u32_of, write, PushWords};
use crate::dtype::{Compute, DType};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// Binary ops, in kernel op-code order (`B_*` in `shaders/elementwise/binary.comp`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    Add,
    Subtract,
    Multiply,
    Divide,
    Pow,
    Remainder,
    Atan2,
    Min,
    Max,
    Quotient,
    BitwiseAnd,
    BitwiseOr,
    BitwiseXor,
    LeftShift,
    RightShift,
    Equal,
    NotEqual,
    Greater,
    Less,
    GreaterEqual,
    LessEqual,
    LogicalAnd,
    LogicalOr,
    LogicalXor,
}

/// Every binary op with its Nx name.
pub const BINARY_OPS: [(&str, BinaryOp); 24] = {
    use BinaryOp::*;
    [
        ("add", Add),
        ("subtract", Subtract),
        ("multiply", Multiply),
        ("divide", Divide),
        ("pow", Pow),
        ("remainder", Remainder),
        ("atan2", Atan2),
        ("min", Min),
        ("max", Max),
        ("quotient", Quotient),
        ("bitwise_and", BitwiseAnd),
        ("bitwise_or", BitwiseOr),
        ("bitwise_xor", BitwiseXor),
        ("left_shift", LeftShift),
        ("right_shift", RightShift),
        ("equal", Equal),
        ("not_equal", NotEqual),
        ("greater", Greater),
        ("less", Less),
        ("greater_equal", GreaterEqual),
        ("less_equal", LessEqual),
        ("logical_and", LogicalAnd),
        ("logical_or", LogicalOr),
        ("logical_xor", LogicalXor),
    ]
};

impl BinaryOp {
    /// Looks an op up by its Nx name.
    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BINARY_OPS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// Nx name.
    pub fn name(self) -> &'static str {
        BINARY_OPS
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .expect("every op is listed")
    }

    /// Comparisons and logical ops compute in the merged input type and store 0/1.
    pub(crate) fn is_predicate(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Equal
                | NotEqual
                | Greater
                | Less
                | GreaterEqual
                | LessEqual
                | LogicalAnd
                | LogicalOr
                | LogicalXor
        )
    }

    /// Whether the binary kernels compute `self` in class `c`.
    pub(crate) fn supported(self, c: Compute) -> bool {
        use BinaryOp::*;
        let float = matches!(c, Compute::F32 | Compute::F64);
        match self {
            Add | Subtract | Multiply | Min | Max | Remainder => true,
            Equal | NotEqual | Greater | Less | GreaterEqual | LessEqual => true,
            LogicalAnd | LogicalOr | LogicalXor => true,
            Divide => float,
            Pow => true,
            Atan2 => float,
            Quotient | BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift => !float,
        }
    }

    /// The kernel that computes `self` in class `c`: pow and atan2 of floats come from the
    /// math library (f64, or f32 through it), the others from binary.comp.
    pub(crate) fn kernel(self, c: Compute) -> Kernel {
        match (self, c) {
            (BinaryOp::Pow | BinaryOp::Atan2, Compute::F64) => Kernel::F64Math(self.name()),
            (BinaryOp::Pow | BinaryOp::Atan2, Compute::F32) if f32_via_f64() => {
                Kernel::F32ViaF64(self.name())
            }
            _ => Kernel::Binary(c),
        }
    }

    /// The class `binary` computes `self` in for operands of types `a` and `b` and a
    /// result of type `out`, before `exact_float` looks at the operands' values, and the
    /// type its result rounds to.
    pub(crate) fn class(self, a: DType, b: DType, out: DType) -> (Compute, DType) {
        let merged = DType::merge(a, b);
        let (compute, rounds_to) = if self.is_predicate() {
            (merged.compute(), merged)
        } else if self == BinaryOp::Divide
            || self == BinaryOp::Atan2
            || self == BinaryOp::Pow && out.is_float()
        {
            (out.compute(), out)
        } else {
            (DType::merge(merged, out).compute(), out)
        };
        (super::loading(compute, &[a, b]), rounds_to)
    }
}

/// Unary ops, in kernel op-code order (`U_*` in `shaders/elementwise/unary.comp`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    Identity,
    Negate,
    Abs,
    Sign,
    Ceil,
    Floor,
    Round,
    Exp,
    Expm1,
    Log,
    Log1p,
    Sigmoid,
    Sin,
    Cos,
    Tan,
    Sinh,
    Cosh,
    Tanh,
    Asin,
    Acos,
    Atan,
    Asinh,
    Acosh,
    Atanh,
    Sqrt,
    Rsqrt,
    Cbrt,
    Erf,
    Erfc,
    ErfInv,
    IsNan,
    IsInfinity,
    BitwiseNot,
    CountLeadingZeros,
    PopulationCount,
    Zero,
    /// Complex conjugate (the identity on real tensors).
    Conjugate,
    /// Imaginary part (zero for real tensors).
    Imag,
}

/// Every unary op reachable by an Nx name (`real` is the identity: a complex input
/// converted to a real output keeps its real part).
pub const UNARY_OPS: [(&str, UnaryOp); 37] = {
    use UnaryOp::*;
    [
        ("negate", Negate),
        ("abs", Abs),
        ("sign", Sign),
        ("ceil", Ceil),
        ("floor", Floor),
        ("round", Round),
        ("exp", Exp),
        ("expm1", Expm1),
        ("log", Log),
        ("log1p", Log1p),
        ("sigmoid", Sigmoid),
        ("sin", Sin),
        ("cos", Cos),
        ("tan", Tan),
        ("sinh", Sinh),
        ("cosh", Cosh),
        ("tanh", Tanh),
        ("asin", Asin),
        ("acos", Acos),
        ("atan", Atan),
        ("asinh", Asinh),
        ("acosh", Acosh),
        ("atanh", Atanh),
        ("sqrt", Sqrt),
        ("rsqrt", Rsqrt),
        ("cbrt", Cbrt),
        ("erf", Erf),
        ("erfc", Erfc),
        ("erf_inv", ErfInv),
        ("is_nan", IsNan),
        ("is_infinity", IsInfinity),
        ("bitwise_not", BitwiseNot),
        ("count_leading_zeros", CountLeadingZeros),
        ("population_count", PopulationCount),
        ("real", Identity),
        ("conjugate", Conjugate),
        ("imag", Imag),
    ]
};

impl UnaryOp {
    /// Looks an op up by its Nx name.
    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UNARY_OPS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, op)| *op)
    }

    /// The Nx name (the first listed, for ops with aliases).
    pub fn name(self) -> &'static str {
        UNARY_OPS
            .iter()
            .find(|(_, op)| *op == self)
            .map(|(n, _)| *n)
            .expect("every op is listed")
    }

    /// Transcendental functions (and rsqrt, Nx's 1 / sqrt(x) rounded twice): on f64 they
    /// come from the library, one module per function (`Kernel::F64Math`, listed in
    /// build/shaders.rs).
    fn is_transcendental(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Exp | Expm1
                | Log
                | Log1p
                | Sigmoid
                | Sin
                | Cos
                | Tan
                | Sinh
                | Cosh
                | Tanh
                | Asin
                | Acos
                | Atan
                | Asinh
                | Acosh
                | Atanh
                | Rsqrt
                | Cbrt
                | Erf
                | Erfc
                | ErfInv
        )
    }

    /// The kernel that computes `self` in class `c`: transcendental functions of floats
    /// come from the math library (f64, or f32 through it), the others from unary.comp.
    pub(crate) fn kernel(self, c: Compute) -> Kernel {
        if c == Compute::F64 && self.is_transcendental() {
            Kernel::F64Math(self.name())
        } else if c == Compute::F32 && self.is_transcendental() && f32_via_f64() {
            // exp's module with the f32 fast path in front (shaders/common/exp32.glsl).
            let fast = self == UnaryOp::Exp && super::exp_fast_path();
            Kernel::F32ViaF64(if fast { "exp_fast" } else { self.name() })
        } else {
            Kernel::Unary(c)
        }
    }

    /// Whether the unary kernels compute `self` in class `c`.
    pub(crate) fn supported(self, c: Compute) -> bool {
        use UnaryOp::*;
        match c {
            Compute::F32 | Compute::F64 => {
                !matches!(self, BitwiseNot | CountLeadingZeros | PopulationCount)
            }
            _ => matches!(
                self,
                Identity
                    | Zero
                    | Negate
                    | Abs
                    | Sign
                    | Ceil
                    | Floor
                    | Round
                    | IsNan
                    | IsInfinity
                    | BitwiseNot
                    | CountLeadingZeros
                    | PopulationCount
            ),
        }
    }

    /// Predicates compute in the input's type and store 0/1.
    /// The class `unary` computes `self` in for an input of type `t` and a result of type
    /// `out`, before `exact_float` looks at the input's values.
    pub(crate) fn class(self, t: DType, out: DType) -> Compute {
        if self.is_predicate()
            || self == UnaryOp::CountLeadingZeros
            || self == UnaryOp::PopulationCount
        {
            t.compute()
        } else if out.is_float() && t.is_int() && self != UnaryOp::Identity {
            super::loading(out.compute(), &[t])
        } else {
            Compute::for_conversion(t, out)
        }
    }

    /// is_nan and is_infinity compute in the input's class and store 0/1.
    pub(crate) fn is_predicate(self) -> bool {
        matches!(self, UnaryOp::IsNan | UnaryOp::IsInfinity)
    }
}

/// Nx `op(a, b)` into a tensor of `out_shape` and `out_type` (Nx has computed both).
pub fn binary(
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    if super::complex::involved(&[a.dtype, b.dtype, out_type]) {
        return super::complex::binary(op, a, b, out_shape, out_type);
    }
    let (compute, rounds_to) = op.class(a.dtype, b.dtype, out_type);
    let compute = super::exact_float(compute, rounds_to, &[a, b]);
    if !op.supported(compute) {
        return Err(crate::unsupported!(
            "{} on {} and {} (computing in {:?}) has no Vulkan kernel yet",
            op.name(),
            a.dtype.name(),
            b.dtype.name(),
            compute
        ));
    }
    let sa = broadcast_strides(&a.shape, out_shape)?;
    let sb = broadcast_strides(&b.shape, out_shape)?;
    let out = Tensor::empty(out_shape, out_type)?;
    let n = numel(out_shape)?;
    if n == 0 {
        return Ok(out);
    }
    let (d, s) = simplify(out_shape, &[sa, sb])?;
    let ops = op as u32 | a.dtype.code() << 8 | b.dtype.code() << 16 | out_type.code() << 24;
    let kernel = op.kernel(compute);
    // The library kernels (F64Math, F32ViaF64) are built without the vec4 paths.
    let plain = kernel == Kernel::Binary(compute);
    let mut modes = access_mode(&d, &s[0]) | access_mode(&d, &s[1]) << 2;
    let mut threads = n as u64;
    if plain && modes == 1 | 1 << 2 && vectorisable(compute, &[a, b, &out]) {
        modes |= VECTORISED;
        threads = threads.div_ceil(4);
    } else if plain && rows_vectorisable(compute, &d, &s, &[a, b, &out]) {
        modes |= VECTORISED_ROWS;
        threads /= 4;
    }
    let push = two_operand_push(&out, a, b, n, &d, &s)?;
    launch(
        kernel,
        [ops, modes],
        &push,
        element_grid(threads, !plain),
        &[read(&a.block), read(&b.block), write(&out.block)],
    )?;
    Ok(out)
}

/// The push constants of the two-operand element-wise kernels (binary.comp and
/// complex.comp): output and operand addresses, the element count, the simplified
/// `dims` and each operand's `strides` over them.
pub(crate) fn two_operand_push(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    n: usize,
    dims: &[usize],
    strides: &[Vec<isize>],
) -> Result<PushWords> {
    Ok(PushWords::new()
        .addr(&out.block)
        .addr(&a.block)
        .addr(&b.block)
        .u(u32_of(n, "element count")?)
        .u(dims.len() as u32)
        .i(0)
        .i(0)
        .array(dims.iter().map(|&x| x as u32))
        .array(strides[0].iter().map(|&x| x as i32 as u32))
        .array(strides[1].iter().map(|&x| x as i32 as u32)))
}

/// The element-wise kernels' MODES bit for their vec4 path.
const VECTORISED: u32 = 16;

/// Whether contiguous `tensors` can take the vec4 path of the element-wise kernels: a
/// 32-bit compute type that every tensor is stored as, and 16-byte aligned buffers.
fn vectorisable(compute: Compute, tensors: &[&Tensor]) -> bool {
    !compute.is_64()
        && tensors
            .iter()
            .all(|t| t.dtype == compute.storage() && t.block.addr.is_multiple_of(16))
}

/// The binary kernel's MODES bit for its vec4 path with broadcasting.
const VECTORISED_ROWS: u32 = 32;

/// Whether the binary kernel's broadcasting vec4 path serves `dims`/`strides` (simplified):
/// the innermost dim a multiple of 4, walked by each operand with stride 0 (one value for
/// four elements) or 1 (a vec4; its other strides multiples of 4 so vec4s stay aligned),
/// and the types as [`vectorisable`] wants them.
fn rows_vectorisable(
    compute: Compute,
    dims: &[usize],
    strides: &[Vec<isize>],
    tensors: &[&Tensor],
) -> bool {
    let Some(&inner) = dims.last() else {
        return false;
    };
    inner.is_multiple_of(4)
        && vectorisable(compute, tensors)
        && strides.iter().all(|s| match s.last() {
            Some(0) => true,
            Some(1) => s[..s.len() - 1].iter().all(|&x| x % 4 == 0),
            _ => false,
        })
}

/// Runs the unary kernel over `t` read through `dims`/`strides`.
fn unary_strided(
    op: UnaryOp,
    compute: Compute,
    t: &Tensor,
    dims: &[usize],
    strides: &[isize],
    out_type: DType,
) -> Result<Tensor> {
    let out = Tensor::empty(dims, out_type)?;
    let n = numel(dims)?;
    if n == 0 {
        return Ok(out);
    }
    let (d, s) = simplify(dims, &[strides.to_vec()])?;
    let ops = op as u32 | t.dtype.code() << 8 | out_type.code() << 16;
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&t.block)
        .u(u32_of(n, "element count")?)
        .u(d.len() as u32)
        .i(0)
        .array(d.iter().map(|&x| x as u32))
        .array(s[0].iter().map(|&x| x as i32 as u32));
    let mut mode = (access_mode(&d, &s[0]) == 1) as u32;
    let mut threads = n as u64;
    let kernel = op.kernel(compute);
    // The library kernels (F64Math, F32ViaF64) are built without the vec4 paths.
    let plain = kernel == Kernel::Unary(compute);
    if mode == 1 && plain && vectorisable(compute, &[t, &out]) {
        mode |= VECTORISED;
        threads = threads.div_ceil(4);
    }
    launch(
        kernel,
        [ops, mode],
        &push,
        element_grid(threads, !plain),
        &[read(&t.block), write(&out.block)],
    )?;
    Ok(out)
}

/// Nx unary `op(t)` with output type `out_type`.
pub fn unary(op: UnaryOp, t: &Tensor, out_type: DType) -> Result<Tensor> {
    if super::complex::involved(&[t.dtype, out_type]) {
        return super::complex::unary(op, t, out_type);
    }
    // On real tensors the conjugate is the value and the imaginary part zero.
    let op = match op {
        UnaryOp::Conjugate => UnaryOp::Identity,
        UnaryOp::Imag => UnaryOp::Zero,
        op => op,
    };
    let compute = op.class(t.dtype, out_type);
    // A float function of integers: of their exact values, as Nx computes it (the
    // conversion alone, `Identity`, rounds once in any class).
    let compute = if out_type.is_float() && t.dtype.is_int() && op != UnaryOp::Identity {
        super::exact_float(compute, out_type, &[t])
    } else {
        compute
    };
    if !op.supported(compute) {
        return Err(crate::unsupported!(
            "{op:?} on {} (computing in {compute:?}) has no Vulkan kernel yet",
            t.dtype.name()
        ));
    }
    unary_strided(
        op,
        compute,
        t,
        &t.shape.clone(),
        &contiguous_strides(&t.shape),
        out_type,
    )
}

/// Nx `as_type`: converts element by element (floats to integers truncate toward zero).
pub fn as_type(t: &Tensor, out_type: DType) -> Result<Tensor> {
    if t.dtype == out_type {
        return Ok(t.clone());
    }
    if super::complex::involved(&[t.dtype, out_type]) {
        return super::complex::unary(UnaryOp::Identity, t, out_type);
    }
    let compute = Compute::for_conversion(t.dtype, out_type);
    unary_strided(
        UnaryOp::Identity,
        compute,
        t,
        &t.shape.clone(),
        &contiguous_strides(&t.shape),
        out_type,
    )
}
