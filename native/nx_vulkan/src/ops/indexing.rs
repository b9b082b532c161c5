//! Selection and indexing: `select`, `clip` and `gather`. Elements move as bits (kernels
//! per element width); operands are first converted to the output type where they differ.

use super::elementwise::{as_type, binary, BinaryOp};
use super::layout::{broadcast_strides, contiguous_strides, simplify, MAX_RANK};
use super::shape::gather_strided;
use super::{grid, launch, read, u32_of, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// The select kernel's rank limit (its push constants hold four strides per operand).
const SELECT_RANK: usize = 4;

/// `t` as `dtype`, converting only when the types differ.
fn converted(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype == dtype {
        Ok(t.clone())
    } else {
        as_type(t, dtype)
    }
}

/// Nx `select(pred, on_true, on_false)`: `on_true` where `pred` is nonzero, else
/// `on_false`, each broadcast to `out_shape` and converted to `out_type`.
pub fn select(
    pred: &Tensor,
    on_true: &Tensor,
    on_false: &Tensor,
    out_shape: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    if pred.dtype.is_complex() {
        return Err(crate::unsupported!(
            "select with a {} predicate has no Vulkan kernel yet",
            pred.dtype.name()
        ));
    }
    let a = converted(on_true, out_type)?;
    let b = converted(on_false, out_type)?;
    let out = Tensor::empty(out_shape, out_type)?;
    let n = numel(out_shape)?;
    if n == 0 {
        return Ok(out);
    }
    let strides = [
        broadcast_strides(&pred.shape, out_shape)?,
        broadcast_strides(&a.shape, out_shape)?,
        broadcast_strides(&b.shape, out_shape)?,
    ];
    let (mut d, mut s) = simplify(out_shape, &strides)?;
    // Above the kernel's rank, operands are first laid out contiguously at the output shape.
    let (pred, a, b) = if d.len() > SELECT_RANK {
        let flat = |t: &Tensor, st: &[isize]| gather_strided(t, out_shape, st, 0);
        let ops = (
            flat(pred, &strides[0])?,
            flat(&a, &strides[1])?,
            flat(&b, &strides[2])?,
        );
        d = vec![n];
        s = vec![vec![1]; 3];
        ops
    } else {
        (pred.clone(), a, b)
    };
    let mut push = PushWords::new()
        .addr(&out.block)
        .addr(&pred.block)
        .addr(&a.block)
        .addr(&b.block)
        .u(u32_of(n, "element count")?)
        .u(d.len() as u32)
        .array_n(d.iter().map(|&x| x as u32), SELECT_RANK);
    for st in &s {
        push = push.array_n(st.iter().map(|&x| x as i32 as u32), SELECT_RANK);
    }
    launch(
        Kernel::Select(super::raw_width(out_type, "select")?),
        [pred.dtype.code(), 0],
        &push,
        grid(n as u64),
        &[
            read(&pred.block),
            read(&a.block),
            read(&b.block),
            write(&out.block),
        ],
    )?;
    Ok(out)
}

/// Nx `clip(t, min, max)` as `Nx.BinaryBackend` computes it: `x` where `x > min`, else
/// `min`; then that where it is `< max`, else `max` (so NaN becomes `min`, or `max`).
pub fn clip(t: &Tensor, min: &Tensor, max: &Tensor, out_type: DType) -> Result<Tensor> {
    let shape = t.shape.clone();
    let above = binary(BinaryOp::Greater, t, min, &shape, DType::U8)?;
    let low = select(&above, t, min, &shape, out_type)?;
    let below = if [t, min, max].iter().any(|x| x.dtype != out_type) {
        // `low` in the result type may no longer order as the value did (a u64 at or
        // above 2^63 is negative in a signed type; a subnormal bf16 below 0 rounds to
        // -0.0 in f16, which is not below 0.0): compare the operand that `low` took.
        let t_below = binary(BinaryOp::Less, t, max, &shape, DType::U8)?;
        let min_below = binary(BinaryOp::Less, min, max, &shape, DType::U8)?;
        select(&above, &t_below, &min_below, &shape, DType::U8)?
    } else {
        binary(BinaryOp::Less, &low, max, &shape, DType::U8)?
    };
    select(&below, &low, max, &shape, out_type)
}

/// The axes that index rows address, in the form the gather and scatter kernels take.
pub(super) struct IndexedAxes {
    /// The tensor's axes not indexed, in order.
    pub(super) other: Vec<usize>,
    /// Elements one index row selects (the product of the other axes).
    pub(super) inner: usize,
    k: usize,
    /// 4 bits per index column: the tensor axis it addresses.
    packed: u32,
    /// Bit d set when tensor axis d is not indexed.
    other_mask: u32,
}

impl IndexedAxes {
    /// `axes` (already checked against `shape`) of a tensor of `shape`.
    pub(super) fn new(shape: &[usize], axes: &[usize]) -> IndexedAxes {
        let other: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
        IndexedAxes {
            inner: other.iter().map(|&d| shape[d]).product(),
            k: axes.len(),
            packed: axes
                .iter()
                .enumerate()
                .fold(0, |acc, (j, &a)| acc | (a as u32) << (4 * j)),
            other_mask: other.iter().fold(0, |acc, &d| acc | 1 << d),
            other,
        }
    }

    /// Appends what gather.comp and scatter.comp take after their addresses: the
    /// invocation count `n`, the row geometry and the tensor's dims and strides.
    pub(super) fn push(&self, push: PushWords, n: usize, shape: &[usize]) -> Result<PushWords> {
        Ok(push
            .u(u32_of(n, "element count")?)
            .u(u32_of(self.inner, "row size")?)
            .u(self.k as u32)
            .u(shape.len() as u32)
            .u(self.packed)
            .u(self.other_mask)
            .array(shape.iter().map(|&x| x as u32))
            .array(contiguous_strides(shape).iter().map(|&x| x as i32 as u32)))
    }
}

/// Indices must be of an integer type.
pub(super) fn check_int_indices(op: &str, indices: &Tensor) -> Result<()> {
    if indices.dtype.is_int() {
        return Ok(());
    }
    Err(crate::invalid!(
        "{op}: indices must be integers, got {}",
        indices.dtype.name()
    ))
}

/// Nx `gather(t, indices, axes)`: `indices` has shape `[..batch, k]`, each row naming a
/// position along `axes` (k of them); the output has shape `batch ++ (t's other axes)`.
/// Indices out of range are clamped to the axis (as EXLA does).
pub fn gather(t: &Tensor, indices: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let rank = t.shape.len();
    let Some((&k, batch)) = indices.shape.split_last() else {
        return Err(crate::invalid!(
            "gather: indices must have rank >= 1, got a scalar"
        ));
    };
    if k != axes.len() || axes.iter().any(|&a| a >= rank) || rank > MAX_RANK {
        return Err(crate::invalid!(
            "gather: indices of shape {:?} with axes {axes:?} do not address a tensor of shape {:?}",
            indices.shape,
            t.shape
        ));
    }
    for (i, a) in axes.iter().enumerate() {
        if axes[..i].contains(a) {
            return Err(crate::invalid!(
                "gather: axis {a} appears twice in {axes:?}"
            ));
        }
    }
    check_int_indices("gather", indices)?;
    let ia = IndexedAxes::new(&t.shape, axes);
    let mut out_shape = batch.to_vec();
    out_shape.extend(ia.other.iter().map(|&d| t.shape[d]));
    let out = Tensor::empty(&out_shape, t.dtype)?;
    let n = numel(&out_shape)?;
    if n == 0 {
        return Ok(out);
    }
    if t.numel() == 0 {
        return Err(crate::invalid!(
            "gather: cannot index into an empty tensor of shape {:?}",
            t.shape
        ));
    }
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&t.block)
        .addr(&indices.block);
    let push = ia.push(push, n, &t.shape)?;
    launch(
        Kernel::Gather(super::raw_width(t.dtype, "gather")?),
        [indices.dtype.code(), 0],
        &push,
        grid(n as u64),
        &[read(&t.block), read(&indices.block), write(&out.block)],
    )?;
    Ok(out)
}
