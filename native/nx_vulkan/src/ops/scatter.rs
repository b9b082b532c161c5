//! `indexed_put` and `indexed_add`: update rows written (or added) at positions named by
//! index rows. Deterministic where Nx.BinaryBackend is: for `indexed_put` the last row
//! naming a position wins; integer sums wrap exactly; float sums accumulate in f64 (so
//! f32/f16/bf16 results are those of Nx.BinaryBackend, which also sums in f64, except
//! where the order of additions matters in f64 itself).

use super::creation::{constant, Scalar};
use super::elementwise::as_type;
use super::indexing::{check_int_indices, IndexedAxes};
use super::layout::{contiguous_strides, MAX_RANK};
use super::shape::gather_strided;
use super::{grid, launch, read, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::{Accumulator, Kernel};
use crate::tensor::{numel, Tensor};

const MODE_WINNER: u32 = 0;
const MODE_PUT: u32 = 1;
const MODE_ADD: u32 = 2;

/// The checked geometry of an indexed update.
struct Plan {
    rows: usize,
    axes: IndexedAxes,
}

fn plan(
    op: &str,
    target: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    axes: &[usize],
) -> Result<Plan> {
    let rank = target.shape.len();
    let bad = || {
        crate::invalid!(
            "{op}: indices {:?} and updates {:?} with axes {axes:?} do not fit a target of shape {:?}",
            indices.shape,
            updates.shape,
            target.shape
        )
    };
    let [rows, k] = indices.shape[..] else {
        return Err(bad());
    };
    let sorted = axes.windows(2).all(|w| w[0] < w[1]);
    if k != axes.len() || !sorted || axes.iter().any(|&a| a >= rank) || rank > MAX_RANK {
        return Err(bad());
    }
    let ia = IndexedAxes::new(&target.shape, axes);
    let mut want = vec![rows];
    want.extend(ia.other.iter().map(|&d| target.shape[d]));
    if updates.shape != want {
        return Err(bad());
    }
    check_int_indices(op, indices)?;
    Ok(Plan { rows, axes: ia })
}

/// One launch of the scatter kernel in `mode` over `n` invocations.
#[allow(clippy::too_many_arguments)]
fn scatter_launch(
    kernel: Kernel,
    mode: u32,
    n: usize,
    p: &Plan,
    out: &Tensor,
    upd: &Tensor,
    indices: &Tensor,
    win: Option<&Tensor>,
) -> Result<()> {
    let mut accesses = vec![read(&upd.block), read(&indices.block), write(&out.block)];
    if let Some(w) = win {
        accesses.push(write(&w.block));
    }
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&upd.block)
        .addr(&indices.block)
        .addr(&win.unwrap_or(out).block);
    let push = p.axes.push(push, n, &out.shape)?;
    launch(
        kernel,
        [indices.dtype.code() | mode << 8, 0],
        &push,
        grid(n as u64),
        &accesses,
    )
}

/// A fresh contiguous copy of `t` as `dtype`.
fn fresh(t: &Tensor, dtype: DType) -> Result<Tensor> {
    if t.dtype == dtype {
        gather_strided(t, &t.shape, &contiguous_strides(&t.shape), 0)
    } else {
        as_type(t, dtype)
    }
}

/// Nx `indexed_put(target, indices, updates, axes)` with output type `out_type`:
/// `indices` is `[n, k]` (positions along the sorted `axes`), `updates` is
/// `[n, ..the other axes]`. Out-of-range indices are clamped to their axis.
pub fn indexed_put(
    target: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    axes: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    if out_type == DType::C128 {
        // No 16-byte raw kernel: each part on its own.
        return super::complex::by_planes(target, updates, out_type, |t, u, ty| {
            indexed_put(t, indices, u, axes, ty)
        });
    }
    let p = plan("indexed_put", target, indices, updates, axes)?;
    let out = fresh(target, out_type)?;
    if p.rows == 0 || out.numel() == 0 {
        return Ok(out);
    }
    let upd = fresh(updates, out_type)?;
    let positions: usize = axes.iter().map(|&a| target.shape[a]).product();
    let win = constant(&[positions], DType::U32, Scalar::Int(0))?;
    let kernel = Kernel::Scatter(super::raw_width(out_type, "indexed_put")?);
    let w = Some(&win);
    scatter_launch(kernel, MODE_WINNER, p.rows, &p, &out, &upd, indices, w)?;
    let n = numel(&updates.shape)?;
    scatter_launch(kernel, MODE_PUT, n, &p, &out, &upd, indices, w)?;
    Ok(out)
}

/// Nx `indexed_add(target, indices, updates, axes)` with output type `out_type` (shapes
/// as in [`indexed_put`]).
pub fn indexed_add(
    target: &Tensor,
    indices: &Tensor,
    updates: &Tensor,
    axes: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    if super::complex::involved(&[target.dtype, updates.dtype, out_type]) {
        return super::complex::by_planes(target, updates, out_type, |t, u, ty| {
            indexed_add(t, indices, u, axes, ty)
        });
    }
    let p = plan("indexed_add", target, indices, updates, axes)?;
    let (acc_type, acc) = if out_type.is_float() {
        (DType::F64, Accumulator::F64)
    } else if out_type.size() == 8 {
        (DType::S64, Accumulator::I64)
    } else {
        (DType::S32, Accumulator::I32)
    };
    if p.rows == 0 || target.numel() == 0 {
        return fresh(target, out_type);
    }
    // Integers: the accumulator wraps, and sums mod 2^32 (2^64) agree with the output
    // type's narrower wrap-around; floats are read exactly into f64, as Nx reads numbers.
    let sum = fresh(target, acc_type)?;
    let upd = fresh(updates, acc_type)?;
    let n = numel(&updates.shape)?;
    scatter_launch(
        Kernel::ScatterAdd(acc),
        MODE_ADD,
        n,
        &p,
        &sum,
        &upd,
        indices,
        None,
    )?;
    as_type(&sum, out_type)
}
