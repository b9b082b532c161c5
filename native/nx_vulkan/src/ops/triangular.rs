//! Nx `triangular_solve(a, b, opts)`: A X = B (left side) or X A = B, A lower or upper
//! triangular, optionally transposed, batched over A's leading axes.
//!
//! Every option combination becomes one lower-triangular system solved by forward
//! substitution (trsolve.comp), as `Nx.BinaryBackend` reduces them: transposing A, and
//! reversing its rows and columns (with B's rows) where the system is upper triangular;
//! for X A = B, transposing B and X. The kernel reads A and B through these maps, so
//! nothing is copied. It computes in f64 where the device has it (Nx computes in
//! double), otherwise f32. Unlike the other ops this one waits for the GPU: a zero on the
//! diagonal is an error, as in Nx.

use super::creation::{constant, Scalar};
use super::{grid_groups, launch, read, u32_of, write, PushWords};
use crate::dtype::{Compute, DType};
use crate::engine::engine;
use crate::error::{Error, Result};
use crate::kernels::Kernel;
use crate::tensor::Tensor;

/// Nx's `:transform_a`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TransformA {
    None,
    Transpose,
    /// Complex conjugate: the same as `None` for real types.
    Conjugate,
}

/// Nx's triangular_solve options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TriangularSolveOpts {
    pub left_side: bool,
    pub lower: bool,
    pub transform_a: TransformA,
}

/// The message Nx raises for a zero on the diagonal.
pub const SINGULAR: &str = "can't solve for singular matrix";

/// Nx `triangular_solve(a, b, opts)` with output type `out_type` (a float type).
/// Errors: shapes Nx rejects, a non-float output type, and a singular A
/// (`InvalidArgument` with the message [`SINGULAR`]).
pub fn triangular_solve(
    a: &Tensor,
    b: &Tensor,
    opts: TriangularSolveOpts,
    out_type: DType,
) -> Result<Tensor> {
    let bad = |why: &str| {
        crate::invalid!(
            "triangular_solve: a {:?} and b {:?} ({opts:?}): {why}",
            a.shape,
            b.shape
        )
    };
    let rank = a.shape.len();
    if rank < 2 || a.shape[rank - 1] != a.shape[rank - 2] {
        return Err(bad("a must be a square matrix or a batch of them"));
    }
    if !out_type.is_float() && !out_type.is_complex() {
        return Err(bad(&format!(
            "output type {} is not a float type",
            out_type.name()
        )));
    }
    let n = a.shape[rank - 1];
    let batch = &a.shape[..rank - 2];
    // B per batch: a vector of n, or a matrix whose rows (left side) or columns are n.
    let (m, b_is_matrix) = if b.shape.len() == batch.len() + 1
        && b.shape[..batch.len()] == *batch
        && b.shape[batch.len()] == n
    {
        (1, false)
    } else if b.shape.len() == batch.len() + 2 && b.shape[..batch.len()] == *batch {
        let (rows, cols) = (b.shape[batch.len()], b.shape[batch.len() + 1]);
        match opts.left_side {
            true if rows == n => (cols, true),
            false if cols == n => (rows, true),
            _ => return Err(bad("incompatible dimensions for a and b")),
        }
    } else {
        return Err(bad("incompatible dimensions for a and b"));
    };
    let batches: usize = batch.iter().product();
    let out = Tensor::empty(&b.shape, out_type)?;
    if batches * m * n == 0 {
        return Ok(out);
    }
    let has_f64 = engine()?.info().f64;
    if out_type.is_complex() && !has_f64 && [a.dtype, b.dtype].iter().any(|t| t.compute().is_64()) {
        return Err(crate::unsupported!(
            "triangular_solve of {} and {} needs shaderFloat64",
            a.dtype.name(),
            b.dtype.name()
        ));
    }
    let compute = match (out_type.is_complex(), out_type == DType::C128 || has_f64) {
        (true, true) => Compute::C128,
        (true, false) => Compute::C64,
        (false, _) if out_type == DType::F64 || has_f64 => Compute::F64,
        (false, _) => Compute::F32,
    };
    let transpose = opts.transform_a == TransformA::Transpose;
    let transpose_a = opts.left_side == transpose;
    let reverse = opts.left_side == (opts.lower == transpose);
    let transpose_b = !opts.left_side && b_is_matrix;
    let conjugate_a = opts.transform_a == TransformA::Conjugate && out_type.is_complex();
    let modes = transpose_a as u32
        | (reverse as u32) << 1
        | (transpose_b as u32) << 2
        | (conjugate_a as u32) << 3;
    let scratch_type = compute.storage();
    let scratch = Tensor::empty(&[batches * m * n], scratch_type)?;
    let flag = constant(&[], DType::U32, Scalar::Int(0))?;
    let ops = a.dtype.code() | b.dtype.code() << 8 | out_type.code() << 16;
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&a.block)
        .addr(&b.block)
        .addr(&scratch.block)
        .addr(&flag.block)
        .u(u32_of(n, "order of a")?)
        .u(u32_of(m, "columns of b")?)
        .u(u32_of(batches, "batch count")?);
    let columns = u32_of(batches * m, "columns to solve")?;
    launch(
        Kernel::TriangularSolve(compute),
        [ops, modes],
        &push,
        grid_groups(u64::from(columns).div_ceil(64)),
        &[
            read(&a.block),
            read(&b.block),
            write(&scratch.block),
            write(&flag.block),
            write(&out.block),
        ],
    )?;
    let singular = flag.to_bytes()? != [0, 0, 0, 0];
    if singular {
        return Err(Error::InvalidArgument(SINGULAR.to_string()));
    }
    Ok(out)
}
