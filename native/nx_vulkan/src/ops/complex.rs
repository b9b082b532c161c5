//! Complex numbers (c64, c128). Element-wise ops, conversions and sum/product run the
//! complex kernel (`shaders/complex/complex.comp`); dot and conv are four real products
//! of the real and imaginary planes; fft/ifft run the DFT kernel (`complex/dft.comp`).
//!
//! Components compute in f64 on devices with it, as Nx.BinaryBackend does (Erlang
//! floats), and round once to the output; a device without f64 computes c64 in f32 and
//! has no c128.

use super::creation::Scalar;
use super::elementwise::{BinaryOp, UnaryOp};
use super::layout::{broadcast_strides, simplify};
use super::reduce::ReduceOp;
use super::{access_mode, grid, launch, read, u32_of, write, PushWords};
use crate::dtype::{Compute, DType};
use crate::engine::engine;
use crate::error::Result;
use crate::exec::Access;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// `kind` field of the complex kernel's MODES (see complex.comp).
const KIND_UNARY: u32 = 0;
const KIND_BINARY: u32 = 1;
const KIND_ROWS: u32 = 2;
/// Longest serial loop of the complex fold and the DFT (lavapipe stops shader loops after
/// about 65k iterations; longer ones would also be slow): beyond it, `Unsupported`.
const MAX_SERIAL: usize = 1 << 15;
/// The complex kernel's binary op that pairs a real and an imaginary plane.
const MAKE_COMPLEX: u32 = 24;

/// Whether an op involving these types goes through the complex kernels.
pub fn involved(types: &[DType]) -> bool {
    types.iter().any(|t| t.is_complex())
}

/// The class complex components compute in for these operand types: f64 where the
/// device has it; f32 otherwise, unless an operand needs 64 bits (c128, f64, s64, u64).
fn component_compute(types: &[DType]) -> Result<Compute> {
    if engine()?.info().f64 {
        return Ok(Compute::F64);
    }
    match types.iter().find(|t| t.compute().is_64()) {
        Some(t) => Err(crate::unsupported!(
            "complex numbers with {} need shaderFloat64, which this device lacks",
            t.name()
        )),
        None => Ok(Compute::F32),
    }
}

/// Records one launch of the element-wise complex kernel: `out[i] = op(a[.], b[.])`
/// with `a` and `b` broadcast to the output shape (`b` ignored by unary ops). `math`
/// names a transcendental function (`complex_math.glsl`), which on devices with f64 has
/// a module of its own.
fn elementwise(
    kind: u32,
    op: u32,
    math: Option<&'static str>,
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    let compute = component_compute(&[a.dtype, b.dtype, out_type])?;
    let kernel = match math {
        Some(name) if compute == Compute::F64 => Kernel::ComplexMath(name),
        _ => Kernel::Complex(compute),
    };
    let out = Tensor::empty(out_shape, out_type)?;
    let n = numel(out_shape)?;
    if n == 0 {
        return Ok(out);
    }
    let sa = broadcast_strides(&a.shape, out_shape)?;
    let sb = broadcast_strides(&b.shape, out_shape)?;
    let (d, s) = simplify(out_shape, &[sa, sb])?;
    let ops = op | a.dtype.code() << 8 | b.dtype.code() << 16 | out_type.code() << 24;
    let modes = access_mode(&d, &s[0]) | access_mode(&d, &s[1]) << 2 | kind << 4;
    let push = super::elementwise::two_operand_push(&out, a, b, n, &d, &s)?;
    launch(
        kernel,
        [ops, modes],
        &push,
        grid(n as u64),
        &[read(&a.block), read(&b.block), write(&out.block)],
    )?;
    Ok(out)
}

/// A unary op where the input or the output is complex: conversions (`Identity`, which
/// keeps the real part when the output is real), negate, abs, sqrt, conjugate, imag,
/// is_nan and is_infinity, and the transcendental functions (exp, log, sin, ... cbrt,
/// as the `complex` library Nx uses defines them). erf, erfc and erf_inv, which Nx
/// defines on complex numbers only with a zero imaginary part, are
/// [`super::complex_real`]'s.
pub fn unary(op: UnaryOp, t: &Tensor, out_type: DType) -> Result<Tensor> {
    use UnaryOp::*;
    if matches!(op, Erf | Erfc | ErfInv) {
        return super::complex_real::unary_of_real_part(op, t, out_type);
    }
    let math = match op {
        Identity | Negate | Abs | Sqrt | Conjugate | Imag | IsNan | IsInfinity => None,
        Exp | Expm1 | Log | Log1p | Sigmoid | Sin | Cos | Tan | Sinh | Cosh | Tanh | Asin
        | Acos | Atan | Asinh | Acosh | Atanh | Rsqrt | Cbrt => Some(op.name()),
        _ => {
            return Err(crate::unsupported!(
                "{} of {} has no Vulkan kernel yet",
                op.name(),
                t.dtype.name()
            ))
        }
    };
    elementwise(
        KIND_UNARY,
        op as u32,
        math,
        t,
        t,
        &t.shape.clone(),
        out_type,
    )
}

/// A binary op where an operand or the output is complex: add, subtract, multiply,
/// divide, pow, equal, not_equal (real operands are complex with a zero imaginary part);
/// atan2, which Nx defines only with zero imaginary parts, is
/// [`super::complex_real`]'s.
pub fn binary(
    op: BinaryOp,
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    use BinaryOp::*;
    if op == Atan2 {
        return super::complex_real::atan2_of_real_parts(a, b, out_shape, out_type);
    }
    let math = match op {
        Add | Subtract | Multiply | Divide | Equal | NotEqual => None,
        Pow => Some(op.name()),
        _ => {
            return Err(crate::unsupported!(
                "{} of {} and {} has no Vulkan kernel yet",
                op.name(),
                a.dtype.name(),
                b.dtype.name()
            ))
        }
    };
    elementwise(KIND_BINARY, op as u32, math, a, b, out_shape, out_type)
}

/// The complex tensor `re + i im` of type `out_type` (planes of one shape).
fn from_planes(re: &Tensor, im: &Tensor, out_type: DType) -> Result<Tensor> {
    elementwise(
        KIND_BINARY,
        MAKE_COMPLEX,
        None,
        re,
        im,
        &re.shape.clone(),
        out_type,
    )
}

/// The real and imaginary planes of `t` as `plane` tensors (`None` for a real `t`).
fn planes(t: &Tensor, plane: DType) -> Result<Planes> {
    if !t.dtype.is_complex() {
        return Ok((super::elementwise::as_type(t, plane)?, None));
    }
    let re = unary(UnaryOp::Identity, t, plane)?;
    let im = unary(UnaryOp::Imag, t, plane)?;
    Ok((re, Some(im)))
}

/// A tensor's real plane and its imaginary one (`None` for a real tensor).
type Planes = (Tensor, Option<Tensor>);

/// A plane-wise op's operands: the component storage type of `a`, `b` and `out_type`
/// (f64 where the device has it) and both operands' planes in it.
fn operand_planes(a: &Tensor, b: &Tensor, out_type: DType) -> Result<(DType, Planes, Planes)> {
    let plane = component_compute(&[a.dtype, b.dtype, out_type])?.storage();
    Ok((plane, planes(a, plane)?, planes(b, plane)?))
}

/// The `out_type` result of a plane-wise op: the real plane alone for a real `out_type`
/// (the imaginary one is then never computed), else `re + i im`.
fn finish(re: Tensor, out_type: DType, im: impl FnOnce() -> Result<Tensor>) -> Result<Tensor> {
    if !out_type.is_complex() {
        return super::elementwise::as_type(&re, out_type);
    }
    from_planes(&re, &im()?, out_type)
}

/// `f(a, b)` for a product `f` that is bilinear (dot, conv) and a complex operand or
/// output: `(ar + i ai)(br + i bi) = (f(ar, br) - f(ai, bi)) + i (f(ar, bi) + f(ai, br))`,
/// each real product computed in the component class (f64 where the device has it).
pub fn bilinear(
    a: &Tensor,
    b: &Tensor,
    out_type: DType,
    f: impl Fn(&Tensor, &Tensor, DType) -> Result<Tensor>,
) -> Result<Tensor> {
    let (plane, (ar, ai), (br, bi)) = operand_planes(a, b, out_type)?;
    let sub = |x: Tensor, y: Tensor| {
        super::elementwise::binary(BinaryOp::Subtract, &x, &y, &x.shape.clone(), plane)
    };
    let add = |x: Tensor, y: Tensor| {
        super::elementwise::binary(BinaryOp::Add, &x, &y, &x.shape.clone(), plane)
    };
    let rr = f(&ar, &br, plane)?;
    let re = match (&ai, &bi) {
        (Some(ai), Some(bi)) => sub(rr, f(ai, bi, plane)?)?,
        _ => rr,
    };
    let shape = re.shape.clone();
    finish(re, out_type, || match (&ai, &bi) {
        (Some(ai), Some(bi)) => add(f(&ar, bi, plane)?, f(ai, &br, plane)?),
        (Some(ai), None) => f(ai, &br, plane),
        (None, Some(bi)) => f(&ar, bi, plane),
        (None, None) => super::creation::constant(&shape, plane, Scalar::Int(0)),
    })
}

/// `f` applied to the real planes and to the imaginary planes of `a` and `b`, for an op
/// that acts on each part alone (indexed_add, indexed_put): `f(ar, br) + i f(ai, bi)`.
pub fn by_planes(
    a: &Tensor,
    b: &Tensor,
    out_type: DType,
    f: impl Fn(&Tensor, &Tensor, DType) -> Result<Tensor>,
) -> Result<Tensor> {
    let (plane, (ar, ai), (br, bi)) = operand_planes(a, b, out_type)?;
    let re = f(&ar, &br, plane)?;
    finish(re, out_type, || {
        let zeros = |t: &Tensor| super::creation::constant(&t.shape, plane, Scalar::Int(0));
        let ai = ai.map_or_else(|| zeros(&ar), Ok)?;
        let bi = bi.map_or_else(|| zeros(&br), Ok)?;
        f(&ai, &bi, plane)
    })
}

/// A serial loop of `terms` terms per output, run as launches of at most MAX_SERIAL
/// terms (lavapipe stops shader loops after ~65k iterations). With more than one launch,
/// a scratch tensor carries the running values from one to the next; the kernels
/// (complex.comp's row fold, dft.comp) continue them in the order one launch would.
struct SerialLaunches {
    terms: usize,
    chunks: usize,
    part: Option<Tensor>,
}

impl SerialLaunches {
    /// The launches for `outputs` running values, complex with f64 parts when `wide`.
    fn new(terms: usize, outputs: usize, wide: bool) -> Result<SerialLaunches> {
        let chunks = terms.div_ceil(MAX_SERIAL).max(1);
        let part = if chunks > 1 {
            let scratch = if wide { DType::C128 } else { DType::C64 };
            Some(Tensor::empty(&[outputs], scratch)?)
        } else {
            None
        };
        Ok(SerialLaunches {
            terms,
            chunks,
            part,
        })
    }

    /// Each launch's first term, end term and flags (bit 0: continue from the scratch
    /// values; bit 1: leave the running values there, not in the output).
    fn ranges(&self) -> impl Iterator<Item = (u32, u32, u32)> + '_ {
        (0..self.chunks).map(|c| {
            let split = (c > 0) as u32 | ((c + 1 < self.chunks) as u32) << 1;
            let end = ((c + 1) * MAX_SERIAL).min(self.terms);
            ((c * MAX_SERIAL) as u32, end as u32, split)
        })
    }

    /// The scratch tensor, or `unused` (any tensor) when there is one launch.
    fn part_or<'a>(&'a self, unused: &'a Tensor) -> &'a Tensor {
        self.part.as_ref().unwrap_or(unused)
    }

    /// `accesses` plus the scratch tensor's, when there is one.
    fn with_part<'a>(&'a self, mut accesses: Vec<Access<'a>>) -> Vec<Access<'a>> {
        if let Some(p) = &self.part {
            accesses.push(write(&p.block));
        }
        accesses
    }
}

/// Nx `sum`/`product` of a complex tensor: each output element folds a row of the
/// tensor with its reduced axes moved last (`rows`, `len`), in input order.
pub fn fold(op: ReduceOp, moved: &Tensor, len: usize, out: &Tensor) -> Result<()> {
    let code = match op {
        ReduceOp::Sum => BinaryOp::Add,
        ReduceOp::Product => BinaryOp::Multiply,
        _ => {
            return Err(crate::unsupported!(
                "{op:?} of {} has no Vulkan kernel (Nx orders no complex numbers)",
                moved.dtype.name()
            ))
        }
    };
    let compute = component_compute(&[moved.dtype, out.dtype])?;
    let rows = out.numel();
    if rows == 0 {
        return Ok(());
    }
    // Rows longer than MAX_SERIAL fold in several launches (see complex.comp's KIND_ROWS).
    let launches = SerialLaunches::new(len, rows, compute == Compute::F64)?;
    let ops = code as u32 | moved.dtype.code() << 8 | out.dtype.code() << 24;
    for (begin, end, split) in launches.ranges() {
        let push = PushWords::new()
            .addr(&out.block)
            .addr(&moved.block)
            .addr(&launches.part_or(moved).block)
            .u(u32_of(rows, "rows")?)
            .u(1)
            .i(0)
            .i(0)
            .array([u32_of(len, "row length")?, begin, end, split]);
        launch(
            Kernel::Complex(compute),
            [ops, KIND_ROWS << 4],
            &push,
            grid(rows as u64),
            &launches.with_part(vec![read(&moved.block), write(&out.block)]),
        )?;
    }
    Ok(())
}

/// `(cos, sin)` of `-2 pi k / n`, exact at the quarter turns.
fn twiddle(k: usize, n: usize) -> (f64, f64) {
    let quarter = 4 * k / n; // 0..=3
    let rest = (4 * k - quarter * n) as f64 / n as f64; // in [0, 1): a quarter turn's fraction
    let (s, c) = (rest * std::f64::consts::FRAC_PI_2).sin_cos();
    // exp(-i (quarter + rest) pi/2) = (-i)^quarter (c - i s)
    match quarter {
        0 => (c, -s),
        1 => (-s, -c),
        2 => (-c, s),
        _ => (s, c),
    }
}

/// Nx `fft`/`ifft` of `t` along `axis` with `length` points (the input zero-padded or
/// truncated to it), parts of magnitude at most `eps` set to zero.
pub fn fft(
    t: &Tensor,
    length: usize,
    axis: usize,
    eps: f64,
    inverse: bool,
    out_type: DType,
) -> Result<Tensor> {
    if axis >= t.shape.len() || length == 0 || !out_type.is_complex() {
        return Err(crate::invalid!(
            "fft: axis {axis} / length {length} / output {} do not fit shape {:?}",
            out_type.name(),
            t.shape
        ));
    }
    if length > 1 << 31 {
        return Err(crate::unsupported!(
            "fft of length {length}: at most 2^31 points"
        ));
    }
    let compute = component_compute(&[t.dtype, out_type])?;
    let mut shape = t.shape.clone();
    shape[axis] = length;
    let out = Tensor::empty(&shape, out_type)?;
    let total = out.numel();
    if total == 0 {
        return Ok(out);
    }
    let plane = compute.storage();
    let table: Vec<u8> = (0..length)
        .flat_map(|k| {
            let (c, s) = twiddle(k, length);
            if plane == DType::F64 {
                [c.to_le_bytes(), s.to_le_bytes()].concat()
            } else {
                [(c as f32).to_le_bytes(), (s as f32).to_le_bytes()].concat()
            }
        })
        .collect();
    let table = Tensor::from_bytes(&[length, 2], plane, &table)?;
    let inner: usize = t.shape[axis + 1..].iter().product();
    let eps_bits = if plane == DType::F64 {
        eps.to_bits()
    } else {
        (eps as f32).to_bits() as u64
    };
    // Sums of more than MAX_SERIAL terms run as several launches (see dft.comp).
    let terms = length.min(t.shape[axis]);
    let launches = SerialLaunches::new(terms, total, plane == DType::F64)?;
    let ops = inverse as u32 | t.dtype.code() << 8 | out_type.code() << 16;
    for (begin, end, split) in launches.ranges() {
        let push = PushWords::new()
            .addr(&out.block)
            .addr(&t.block)
            .addr(&table.block)
            .u(u32_of(total, "element count")?)
            .u(u32_of(length, "fft length")?)
            .u(u32_of(t.shape[axis], "axis length")?)
            .u(u32_of(inner.max(1), "inner size")?)
            .u(eps_bits as u32)
            .u((eps_bits >> 32) as u32)
            .addr(&launches.part_or(&out).block)
            .u(begin)
            .u(end)
            .u(split);
        launch(
            Kernel::Dft(compute),
            [ops, 0],
            &push,
            grid(total as u64),
            &launches.with_part(vec![read(&t.block), read(&table.block), write(&out.block)]),
        )?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::twiddle;

    #[test]
    fn twiddles_are_exact_at_quarter_turns() {
        assert_eq!(twiddle(0, 4), (1.0, -0.0));
        assert_eq!(twiddle(1, 4), (-0.0, -1.0));
        assert_eq!(twiddle(2, 4), (-1.0, 0.0));
        assert_eq!(twiddle(3, 4), (0.0, 1.0));
        let (c, s) = twiddle(1, 8);
        assert!((c - 0.5f64.sqrt()).abs() < 3e-16 && (s + 0.5f64.sqrt()).abs() < 3e-16);
        let (c, s) = twiddle(5, 12);
        let a = -2.0 * std::f64::consts::PI * 5.0 / 12.0;
        assert!((c - a.cos()).abs() < 1e-15 && (s - a.sin()).abs() < 1e-15);
    }
}
