//! Shape ops: reshape and squeeze touch only metadata; broadcast and transpose (and any
//! other strided rearrangement) run the raw copy kernel.

pub use super::copy::copy_strided;
use super::layout::{broadcast_axes_strides, check_permutation, contiguous_strides};
use crate::dtype::DType;
use crate::error::Result;
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
    copy_strided(t, strides, offset, &out, &contiguous_strides(dims), 0, dims)?;
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

/// Nx `slice` with static start indices (already clamped by the caller), lengths and
/// strides.
pub fn slice(t: &Tensor, start: &[usize], lengths: &[usize], strides: &[usize]) -> Result<Tensor> {
    let rank = t.shape.len();
    if start.len() != rank || lengths.len() != rank || strides.len() != rank {
        return Err(crate::invalid!("slice: start {start:?}, lengths {lengths:?}, strides {strides:?} do not match shape {:?}", t.shape));
    }
    let cs = contiguous_strides(&t.shape);
    let mut dims = Vec::with_capacity(rank);
    let mut st = Vec::with_capacity(rank);
    let mut off = 0isize;
    for i in 0..rank {
        let (s0, len, step) = (start[i], lengths[i], strides[i].max(1));
        if s0 + len > t.shape[i] {
            return Err(crate::invalid!(
                "slice: start {s0} + length {len} exceed axis {i} of shape {:?}",
                t.shape
            ));
        }
        dims.push(len.div_ceil(step));
        st.push(cs[i] * step as isize);
        off += s0 as isize * cs[i];
    }
    gather_strided(t, &dims, &st, off)
}

/// Nx `put_slice`: `t` with `update` written at `start` (already clamped by the caller).
pub fn put_slice(t: &Tensor, start: &[usize], update: &Tensor, out_type: DType) -> Result<Tensor> {
    let base = super::elementwise::as_type(t, out_type)?;
    let upd = super::elementwise::as_type(update, out_type)?;
    if start.len() != t.shape.len() || upd.shape.len() != t.shape.len() {
        return Err(crate::invalid!(
            "put_slice: start {start:?} and update {:?} do not match shape {:?}",
            upd.shape,
            t.shape
        ));
    }
    for i in 0..start.len() {
        if start[i] + upd.shape[i] > t.shape[i] {
            return Err(crate::invalid!(
                "put_slice: update {:?} at {start:?} exceeds shape {:?}",
                upd.shape,
                t.shape
            ));
        }
    }
    let out = Tensor::empty(&t.shape, out_type)?;
    let cs = contiguous_strides(&t.shape);
    copy_strided(&base, &cs, 0, &out, &cs, 0, &t.shape)?;
    let off: isize = start.iter().zip(&cs).map(|(&s, &c)| s as isize * c).sum();
    copy_strided(
        &upd,
        &contiguous_strides(&upd.shape),
        0,
        &out,
        &cs,
        off,
        &upd.shape,
    )?;
    Ok(out)
}

/// Nx `concatenate` along `axis` (inputs already converted to one type by the caller).
pub fn concatenate(ts: &[Tensor], axis: usize, out_type: DType) -> Result<Tensor> {
    let first = ts
        .first()
        .ok_or_else(|| crate::invalid!("concatenate: no tensors"))?;
    let rank = first.shape.len();
    if axis >= rank {
        return Err(crate::invalid!(
            "concatenate: axis {axis} out of range for rank {rank}"
        ));
    }
    let mut shape = first.shape.clone();
    shape[axis] = 0;
    for t in ts {
        let same =
            t.shape.len() == rank && (0..rank).all(|i| i == axis || t.shape[i] == first.shape[i]);
        if !same {
            return Err(crate::invalid!(
                "concatenate: shape {:?} does not fit {:?} on axis {axis}",
                t.shape,
                first.shape
            ));
        }
        shape[axis] += t.shape[axis];
    }
    let out = Tensor::empty(&shape, out_type)?;
    let cs = contiguous_strides(&shape);
    let mut pos = 0usize;
    for t in ts {
        let t = super::elementwise::as_type(t, out_type)?;
        copy_strided(
            &t,
            &contiguous_strides(&t.shape),
            0,
            &out,
            &cs,
            pos as isize * cs[axis],
            &t.shape,
        )?;
        pos += t.shape[axis];
    }
    Ok(out)
}

/// Nx `reverse` along `axes`.
pub fn reverse(t: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let cs = contiguous_strides(&t.shape);
    let mut st = cs.clone();
    let mut off = 0isize;
    for &a in axes {
        if a >= t.shape.len() {
            return Err(crate::invalid!(
                "reverse: axis {a} out of range for shape {:?}",
                t.shape
            ));
        }
        if t.shape[a] > 0 {
            off += (t.shape[a] as isize - 1) * cs[a];
            st[a] = -cs[a];
        }
    }
    gather_strided(t, &t.shape.clone(), &st, off)
}

/// Nx `pad` with `(low, high, interior)` per axis; low/high may be negative.
pub fn pad(
    t: &Tensor,
    value: &Tensor,
    config: &[(isize, isize, usize)],
    out_type: DType,
) -> Result<Tensor> {
    let rank = t.shape.len();
    if config.len() != rank || value.numel() != 1 {
        return Err(crate::invalid!(
            "pad: config {config:?} / pad value {:?} do not fit shape {:?}",
            value.shape,
            t.shape
        ));
    }
    let src = super::elementwise::as_type(t, out_type)?;
    let fill = super::elementwise::as_type(value, out_type)?;
    let mut shape = Vec::with_capacity(rank);
    for (i, &(lo, hi, int)) in config.iter().enumerate() {
        let d = t.shape[i] as isize;
        let core = if d == 0 {
            0
        } else {
            d + (d - 1) * int as isize
        };
        let n = lo + core + hi;
        if n < 0 {
            return Err(crate::invalid!(
                "pad: config {config:?} gives a negative size on axis {i} of {:?}",
                t.shape
            ));
        }
        shape.push(n as usize);
    }
    let out = Tensor::empty(&shape, out_type)?;
    let ocs = contiguous_strides(&shape);
    copy_strided(
        &fill.reshape(&[])?,
        &vec![0; rank],
        0,
        &out,
        &ocs,
        0,
        &shape,
    )?;
    // Input elements land at lo + k * (interior + 1); those outside the output are cut.
    let ics = contiguous_strides(&t.shape);
    let (mut dims, mut in_st, mut out_st) = (Vec::new(), Vec::new(), Vec::new());
    let (mut in_off, mut out_off) = (0isize, 0isize);
    for (i, &(lo, _, int)) in config.iter().enumerate() {
        let step = int as isize + 1;
        let first = if lo < 0 { (-lo + step - 1) / step } else { 0 };
        let mut count = 0isize;
        let mut k = first;
        while k < t.shape[i] as isize && lo + k * step < shape[i] as isize {
            count += 1;
            k += 1;
        }
        dims.push(count.max(0) as usize);
        in_st.push(ics[i]);
        out_st.push(ocs[i] * step);
        in_off += first * ics[i];
        out_off += (lo + first * step) * ocs[i];
    }
    copy_strided(&src, &in_st, in_off, &out, &out_st, out_off, &dims)?;
    Ok(out)
}

/// Nx `bitcast`: the same bytes read as another type of the same width (metadata only).
pub fn bitcast(t: &Tensor, to: DType) -> Result<Tensor> {
    if to.bits() != t.dtype.bits() {
        return Err(crate::invalid!(
            "bitcast: {} and {} differ in width",
            t.dtype.name(),
            to.name()
        ));
    }
    if to.is_sub_byte() && to != t.dtype {
        // u4 <-> s4 (u2 <-> s2): the same bits, but the device stores signed ones
        // sign-extended; an integer conversion wraps exactly as the bitcast reads.
        return super::elementwise::as_type(t, to);
    }
    Ok(Tensor {
        block: t.block.clone(),
        shape: t.shape.clone(),
        dtype: to,
        value_bits: None,
    })
}

/// Nx `stack`: the tensors joined along a new `axis`.
pub fn stack(ts: &[Tensor], axis: usize, out_type: DType) -> Result<Tensor> {
    let with_axis = ts
        .iter()
        .map(|t| {
            if axis > t.shape.len() {
                return Err(crate::invalid!(
                    "stack: axis {axis} out of range for shape {:?}",
                    t.shape
                ));
            }
            let mut s = t.shape.clone();
            s.insert(axis, 1);
            t.reshape(&s)
        })
        .collect::<Result<Vec<_>>>()?;
    concatenate(&with_axis, axis, out_type)
}
