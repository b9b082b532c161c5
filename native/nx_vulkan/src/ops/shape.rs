//! Shape ops: reshape and squeeze touch only metadata; broadcast and transpose (and any
//! other strided rearrangement) run the raw copy kernel.

use super::layout::{broadcast_axes_strides, check_permutation, contiguous_strides, simplify};
use super::{grid, i32_of, launch, read, u32_of, write, PushWords};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// A new contiguous tensor of shape `dims` whose element `i` is the input's element at
/// `offset + sum(coord_d(i) * strides[d])`.
pub fn gather_strided(
    t: &Tensor,
    dims: &[usize],
    strides: &[isize],
    offset: isize,
) -> Result<Tensor> {
    let out = Tensor::empty(dims, t.dtype)?;
    let n = numel(dims)?;
    if n == 0 {
        return Ok(out);
    }
    let (d, s) = simplify(dims, &[strides.to_vec()])?;
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&t.block)
        .u(u32_of(n, "element count")?)
        .u(d.len() as u32)
        .u(0)
        .i(i32_of(offset, "offset")?)
        .array(d.iter().map(|&x| x as u32))
        .array(s[0].iter().map(|&x| x as i32 as u32));
    launch(
        Kernel::Copy(t.dtype.size() as u8),
        &push,
        grid(n as u64),
        &[read(&t.block), write(&out.block)],
    )?;
    Ok(out)
}

/// Nx `reshape`: metadata only.
pub fn reshape(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    t.reshape(shape)
}

/// Nx `squeeze`: drops the given size-1 axes; metadata only.
pub fn squeeze(t: &Tensor, axes: &[usize]) -> Result<Tensor> {
    for &a in axes {
        if a >= t.shape.len() || t.shape[a] != 1 {
            return Err(crate::invalid!(
                "squeeze: axis {a} of shape {:?} is not of size 1",
                t.shape
            ));
        }
    }
    let shape: Vec<usize> = t
        .shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !axes.contains(i))
        .map(|(_, &d)| d)
        .collect();
    t.reshape(&shape)
}

/// Nx `broadcast(t, shape, axes)`.
pub fn broadcast(t: &Tensor, shape: &[usize], axes: &[usize]) -> Result<Tensor> {
    let strides = broadcast_axes_strides(&t.shape, shape, axes)?;
    if numel(shape)? == t.numel() && strides == contiguous_strides(shape) {
        return t.reshape(shape);
    }
    gather_strided(t, shape, &strides, 0)
}

/// Nx `transpose(t, axes)`: output axis `j` is input axis `axes[j]`.
pub fn transpose(t: &Tensor, axes: &[usize]) -> Result<Tensor> {
    check_permutation(axes, t.shape.len(), "transpose")?;
    let cs = contiguous_strides(&t.shape);
    let dims: Vec<usize> = axes.iter().map(|&a| t.shape[a]).collect();
    let strides: Vec<isize> = axes.iter().map(|&a| cs[a]).collect();
    if strides == contiguous_strides(&dims) {
        return t.reshape(&dims);
    }
    gather_strided(t, &dims, &strides, 0)
}
