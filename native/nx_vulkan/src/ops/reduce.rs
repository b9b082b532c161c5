//! Reductions. Axes that end the shape are folded as rows by workgroups (in two passes
//! when rows are few and long); a block of axes followed by kept axes (a sum over axis 0,
//! say) is folded in place by one invocation per output element and chunk, coalesced;
//! other axis sets are first moved last by a strided copy.

use super::creation::Scalar;
use super::layout::contiguous_strides;
use super::shape::gather_strided;
use super::{grid, grid_groups, launch, read, u32_of, write, PushWords};
use crate::dtype::{Compute, DType};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::Tensor;

/// Reductions, in kernel op-code order (`R_*` in `shaders/reduce/reduce.comp`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum ReduceOp {
    Sum,
    Product,
    Max,
    Min,
    All,
    Any,
}

impl ReduceOp {
    /// Looks up an Nx callback name (`sum`, `product`, `reduce_max`, `reduce_min`, `all`, `any`).
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        Some(match name {
            "sum" => ReduceOp::Sum,
            "product" => ReduceOp::Product,
            "reduce_max" => ReduceOp::Max,
            "reduce_min" => ReduceOp::Min,
            "all" => ReduceOp::All,
            "any" => ReduceOp::Any,
            _ => return None,
        })
    }
}

/// Elements one workgroup folds before the reduction splits a row across groups.
const CHUNK: usize = 4096;
/// Invocations a middle-axes reduction aims for (it splits the folded length to get them).
const COLUMN_THREADS: usize = 1 << 17;

/// Validates `axes` (None = all) and returns them sorted.
fn normalize_axes(axes: Option<&[usize]>, rank: usize, op: &str) -> Result<Vec<usize>> {
    let mut ax: Vec<usize> = match axes {
        None => (0..rank).collect(),
        Some(a) => a.to_vec(),
    };
    ax.sort_unstable();
    ax.dedup();
    if let Some(&bad) = ax.iter().find(|&&a| a >= rank) {
        return Err(crate::invalid!(
            "{op}: axis {bad} is out of range for rank {rank}"
        ));
    }
    Ok(ax)
}

/// The input rearranged as [kept..., reduced...] and its (rows, len).
fn rows_view(t: &Tensor, axes: &[usize]) -> Result<(Tensor, usize, usize, Vec<usize>)> {
    let kept: Vec<usize> = (0..t.shape.len()).filter(|a| !axes.contains(a)).collect();
    let perm: Vec<usize> = kept.iter().chain(axes.iter()).copied().collect();
    let rows: usize = kept.iter().map(|&a| t.shape[a]).product();
    let len: usize = axes.iter().map(|&a| t.shape[a]).product();
    let identity = perm.iter().enumerate().all(|(i, &p)| i == p);
    let moved = if identity {
        t.clone()
    } else {
        let cs = contiguous_strides(&t.shape);
        let dims: Vec<usize> = perm.iter().map(|&a| t.shape[a]).collect();
        let strides: Vec<isize> = perm.iter().map(|&a| cs[a]).collect();
        gather_strided(t, &dims, &strides, 0)?
    };
    Ok((moved, rows, len, kept))
}

fn out_shape(shape: &[usize], axes: &[usize], keep: bool) -> Vec<usize> {
    shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect()
}

fn fold_rows(
    op: ReduceOp,
    compute: Compute,
    input: &Tensor,
    rows: usize,
    len: usize,
    out: &Tensor,
    chunks: usize,
) -> Result<()> {
    let chunk_len = len.div_ceil(chunks).max(1);
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&input.block)
        .u(u32_of(rows, "rows")?)
        .u(u32_of(len, "row length")?)
        .u(u32_of(chunk_len, "chunk")?)
        .u(u32_of(chunks, "chunks")?);
    launch(
        Kernel::Reduce(compute),
        [
            op as u32 | input.dtype.code() << 8 | out.dtype.code() << 16,
            0,
        ],
        &push,
        grid_groups((rows * chunks) as u64),
        &[read(&input.block), write(&out.block)],
    )
}

/// `[outer, len, inner]` when the sorted `axes` are one block of consecutive axes followed
/// by kept axes of more than one element.
fn middle_block(shape: &[usize], axes: &[usize]) -> Option<(usize, usize, usize)> {
    let (&first, &last) = (axes.first()?, axes.last()?);
    if last - first + 1 != axes.len() || last + 1 >= shape.len() {
        return None;
    }
    let inner: usize = shape[last + 1..].iter().product();
    (inner > 1).then(|| {
        (
            shape[..first].iter().product(),
            shape[first..=last].iter().product(),
            inner,
        )
    })
}

/// Launches colreduce.comp: out[chunk, o, c] folds input[o, chunk's share of len, c].
fn fold_columns(
    op: ReduceOp,
    compute: Compute,
    input: &Tensor,
    (outer, len, inner): (usize, usize, usize),
    out: &Tensor,
    chunks: usize,
) -> Result<()> {
    let chunk_len = len.div_ceil(chunks).max(1);
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&input.block)
        .u(u32_of(outer, "outer size")?)
        .u(u32_of(len, "reduced length")?)
        .u(u32_of(inner, "inner size")?)
        .u(u32_of(chunk_len, "chunk")?)
        .u(u32_of(chunks, "chunks")?);
    launch(
        Kernel::ColumnReduce(compute),
        [
            op as u32 | input.dtype.code() << 8 | out.dtype.code() << 16,
            0,
        ],
        &push,
        grid((outer * inner * chunks) as u64),
        &[read(&input.block), write(&out.block)],
    )
}

/// Nx `sum`/`product`/`reduce_max`/`reduce_min`/`all`/`any` over `axes` (None = all).
pub fn reduce(
    op: ReduceOp,
    t: &Tensor,
    axes: Option<&[usize]>,
    keep_axes: bool,
    out_type: DType,
) -> Result<Tensor> {
    let axes = normalize_axes(axes, t.shape.len(), &format!("{op:?}"))?;
    let shape = out_shape(&t.shape, &axes, keep_axes);
    let compute = match op {
        ReduceOp::All | ReduceOp::Any => t.dtype.compute(),
        ReduceOp::Sum | ReduceOp::Product => super::float_accumulator(super::loading(
            DType::merge(t.dtype, out_type).compute(),
            &[t.dtype],
        )),
        _ => super::loading(DType::merge(t.dtype, out_type).compute(), &[t.dtype]),
    };
    let out = Tensor::empty(&shape, out_type)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    if axes.iter().any(|&a| t.shape[a] == 0) {
        // Nothing to fold: the identity, in the output type's own range (the kernels'
        // integer identities are their 32/64-bit compute class's, which an s8 or s16
        // store would wrap).
        return super::creation::constant(&shape, out_type, identity(op, out_type));
    }
    if super::complex::involved(&[t.dtype, out_type]) {
        let (moved, _, len, _) = rows_view(t, &axes)?;
        super::complex::fold(op, &moved, len, &out)?;
        return Ok(out);
    }
    if let Some(block) = middle_block(&t.shape, &axes) {
        let (outer, len, inner) = block;
        let cols = outer * inner;
        // Enough chunks for the GPU to be busy, each short enough for lavapipe's loop limit.
        let chunks = COLUMN_THREADS
            .div_ceil(cols)
            .min(len.div_ceil(16))
            .max(len.div_ceil(CHUNK))
            .max(1);
        if chunks == 1 {
            fold_columns(op, compute, t, block, &out, 1)?;
        } else {
            let partial = Tensor::empty(&[chunks, cols], compute.storage())?;
            fold_columns(op, compute, t, block, &partial, chunks)?;
            fold_columns(op, compute, &partial, (1, chunks, cols), &out, 1)?;
        }
        return Ok(out);
    }
    let (moved, rows, len, _) = rows_view(t, &axes)?;
    let chunks = if rows < 1024 && len > 2 * CHUNK {
        len.div_ceil(CHUNK).min(1024)
    } else {
        1
    };
    if chunks == 1 {
        fold_rows(op, compute, &moved, rows, len, &out, 1)?;
    } else {
        let partial = Tensor::empty(&[rows, chunks], compute.storage())?;
        fold_rows(op, compute, &moved, rows, len, &partial, chunks)?;
        fold_rows(op, compute, &partial, rows, chunks, &out, 1)?;
    }
    Ok(out)
}

/// The value of a reduction over no elements (or over padding), as an `out_type` scalar.
pub(crate) fn identity(op: ReduceOp, out_type: DType) -> Scalar {
    // Only integer types need their range (c128 is 128 bits wide: no i128 shift).
    let bits = if out_type.is_int() {
        out_type.bits() as u32
    } else {
        64
    };
    let (min, max) = if out_type.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    match op {
        ReduceOp::Sum | ReduceOp::Any => Scalar::Int(0),
        ReduceOp::Product | ReduceOp::All => Scalar::Int(1),
        ReduceOp::Max if out_type.is_float() => Scalar::Float(f64::NEG_INFINITY),
        ReduceOp::Min if out_type.is_float() => Scalar::Float(f64::INFINITY),
        ReduceOp::Max => Scalar::Int(min),
        ReduceOp::Min => Scalar::Int(max),
    }
}

/// Nx `argmax`/`argmin` along `axis` (None = over all elements, flattened).
pub fn argreduce(
    t: &Tensor,
    axis: Option<usize>,
    keep_axis: bool,
    is_min: bool,
    tie_high: bool,
    out_type: DType,
) -> Result<Tensor> {
    if out_type.is_float() {
        return Err(crate::invalid!(
            "argmax/argmin: output type must be an integer, got {}",
            out_type.name()
        ));
    }
    let axes = match axis {
        None => (0..t.shape.len()).collect::<Vec<_>>(),
        Some(a) => normalize_axes(Some(&[a]), t.shape.len(), "argmax")?,
    };
    let shape = if axis.is_none() {
        Vec::new()
    } else {
        out_shape(&t.shape, &axes, keep_axis)
    };
    let out = Tensor::empty(&shape, out_type)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let (moved, rows, len, _) = rows_view(t, &axes)?;
    let compute = super::loading(t.dtype.compute(), &[t.dtype]);
    let ops = is_min as u32 | (tie_high as u32) << 1 | t.dtype.code() << 8 | out_type.code() << 16;
    let pass = |out: &Tensor,
                input: &Tensor,
                idx: &Tensor,
                rows: usize,
                len: usize,
                chunks: usize,
                pass: u32|
     -> Result<()> {
        let chunk_len = len.div_ceil(chunks).max(1);
        let push = PushWords::new()
            .addr(&out.block)
            .addr(&input.block)
            .addr(&idx.block)
            .u(u32_of(rows, "rows")?)
            .u(u32_of(len, "row length")?)
            .u(u32_of(chunk_len, "chunk")?)
            .u(u32_of(chunks, "chunks")?)
            .u(pass);
        let groups = if pass == 1 { rows * chunks } else { rows };
        let accesses = if pass == 1 {
            [read(&input.block), write(&idx.block), write(&out.block)]
        } else {
            [read(&input.block), read(&idx.block), write(&out.block)]
        };
        launch(
            Kernel::ArgReduce(compute),
            [ops, 0],
            &push,
            grid_groups(groups as u64),
            &accesses,
        )
    };
    if len <= 2 * CHUNK {
        pass(&out, &moved, &out, rows, len, 1, 0)?;
    } else {
        let chunks = len.div_ceil(CHUNK);
        let values = Tensor::empty(&[rows, chunks], compute.storage())?;
        let indices = Tensor::empty(&[rows, chunks], DType::U32)?;
        pass(&values, &moved, &indices, rows, len, chunks, 1)?;
        pass(&out, &values, &indices, rows, chunks, 1, 2)?;
    }
    Ok(out)
}
