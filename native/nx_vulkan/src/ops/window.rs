//! Nx window reductions (`window_sum`, `window_product`, `window_max`, `window_min`) with
//! strides, low/high padding (negative crops) and window dilations, any rank; and
//! `window_scatter_max`/`window_scatter_min` (a selection pass, then `indexed_add`).

use super::creation::scalar_bytes;
use super::elementwise::as_type;
use super::reduce::{identity, ReduceOp};
use super::scatter::indexed_add;
use super::shape::{broadcast, slice};
use super::{grid, launch, read, u32_of, u32_tensor, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::Tensor;

/// How a window slides over a tensor: one entry per axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WindowSpec {
    /// Window size per axis (each at least 1).
    pub dims: Vec<usize>,
    /// Step between window anchors per axis (each at least 1).
    pub strides: Vec<usize>,
    /// Padding before and after each axis; negative values crop.
    pub padding: Vec<(isize, isize)>,
    /// Spacing of window elements per axis (each at least 1).
    pub dilations: Vec<usize>,
}

impl WindowSpec {
    /// The output shape for an input of `shape`, after checking every list has one entry
    /// per axis and sizes, strides and dilations are positive.
    pub fn output_shape(&self, shape: &[usize], what: &str) -> Result<Vec<usize>> {
        let rank = shape.len();
        if [
            self.dims.len(),
            self.strides.len(),
            self.padding.len(),
            self.dilations.len(),
        ]
        .iter()
        .any(|&l| l != rank)
        {
            return Err(crate::invalid!(
                "{what}: window {:?}, strides {:?}, padding {:?} and dilations {:?} need one entry per axis of shape {shape:?}",
                self.dims,
                self.strides,
                self.padding,
                self.dilations
            ));
        }
        if self
            .dims
            .iter()
            .chain(&self.strides)
            .chain(&self.dilations)
            .any(|&x| x == 0)
        {
            return Err(crate::invalid!(
                "{what}: window {:?}, strides {:?} and dilations {:?} must be positive",
                self.dims,
                self.strides,
                self.dilations
            ));
        }
        Ok((0..rank)
            .map(|d| {
                let (lo, hi) = self.padding[d];
                let padded = shape[d] as isize + lo + hi;
                let span = ((self.dims[d] - 1) * self.dilations[d] + 1) as isize;
                if padded < span {
                    0
                } else {
                    ((padded - span) as usize) / self.strides[d] + 1
                }
            })
            .collect())
    }
}

/// The geometry buffer of window.comp: per axis in_dim, out_dim, window_dim, stride, pad_lo,
/// dilation.
fn geometry(t: &Tensor, shape: &[usize], spec: &WindowSpec, what: &str) -> Result<Tensor> {
    let mut geo = Vec::with_capacity(t.shape.len() * 6);
    for (d, &in_dim) in t.shape.iter().enumerate() {
        let pad_lo = i32::try_from(spec.padding[d].0)
            .map_err(|_| crate::invalid!("{what}: padding {:?} is too large", spec.padding))?;
        for v in [
            u32_of(in_dim, "dimension")?,
            u32_of(shape[d], "dimension")?,
            u32_of(spec.dims[d], "window dimension")?,
            u32_of(spec.strides[d], "stride")?,
            pad_lo as u32,
            u32_of(spec.dilations[d], "dilation")?,
        ] {
            geo.push(v);
        }
    }
    u32_tensor(&geo)
}

/// Nx `window_scatter_max` (`is_min` false) or `window_scatter_min`: the output has `t`'s
/// shape and type `out_type`, holds `init` everywhere, and adds `source[w]` at the position
/// of window w's last maximum (minimum), with windows over `t` padded by `init` as
/// `Nx.BinaryBackend` pads; a window whose choice is padding adds nothing.
#[allow(clippy::too_many_arguments)]
pub fn window_scatter(
    is_min: bool,
    t: &Tensor,
    source: &Tensor,
    init: &Tensor,
    dims: &[usize],
    strides: &[usize],
    padding: &[(isize, isize)],
    out_type: DType,
) -> Result<Tensor> {
    let what = if is_min {
        "window_scatter_min"
    } else {
        "window_scatter_max"
    };
    let spec = WindowSpec {
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        padding: padding.to_vec(),
        dilations: vec![1; t.shape.len()],
    };
    let windows = spec.output_shape(&t.shape, what)?;
    if windows != source.shape || init.numel() != 1 {
        return Err(crate::invalid!(
            "{what}: source {:?} must have the windows' shape {windows:?} and init {:?} one element",
            source.shape,
            init.shape
        ));
    }
    let n = t.numel();
    let nwin = source.numel();
    let base = broadcast(&as_type(&init.reshape(&[])?, out_type)?, &[n + 1], &[])?;
    if n == 0 || nwin == 0 {
        return slice(&base, &[0], &[n], &[1])?.reshape(&t.shape);
    }
    u32_of(n + 1, "element count")?;
    let compute = super::loading(t.dtype.compute(), &[t.dtype, init.dtype]);
    let geo = geometry(t, &windows, &spec, what)?;
    let chosen = Tensor::empty(&[nwin, 1], DType::U32)?;
    let push = PushWords::new()
        .addr(&chosen.block)
        .addr(&t.block)
        .addr(&geo.block)
        .addr(&init.block)
        .u(u32_of(nwin, "window count")?)
        .u(t.shape.len() as u32)
        .u(u32_of(dims.iter().product(), "window size")?);
    let op = if is_min { 7 } else { 6 };
    launch(
        Kernel::Window(compute),
        [op | t.dtype.code() << 8 | init.dtype.code() << 16, 0],
        &push,
        grid(nwin as u64),
        &[
            read(&t.block),
            read(&geo.block),
            read(&init.block),
            write(&chosen.block),
        ],
    )?;
    // Windows whose choice is padding add into the extra last element, sliced off.
    let sums = indexed_add(&base, &chosen, &source.reshape(&[nwin])?, &[0], out_type)?;
    slice(&sums, &[0], &[n], &[1])?.reshape(&t.shape)
}

/// Nx `window_<op>(t, window_dimensions, opts)` for `op` in sum, product, max and min, with
/// output type `out_type`. Windows fold in row-major order from the op's identity in
/// `out_type`, which is also the value of padding (as `Nx.BinaryBackend` pads).
pub fn window_reduce(
    op: ReduceOp,
    t: &Tensor,
    spec: &WindowSpec,
    out_type: DType,
) -> Result<Tensor> {
    if !matches!(
        op,
        ReduceOp::Sum | ReduceOp::Product | ReduceOp::Max | ReduceOp::Min
    ) {
        return Err(crate::invalid!(
            "window reduction {op:?} is not one of sum, product, max, min"
        ));
    }
    let what = format!("window_{op:?}").to_lowercase();
    let shape = spec.output_shape(&t.shape, &what)?;
    let out = Tensor::empty(&shape, out_type)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    let compute = super::loading(DType::merge(t.dtype, out_type).compute(), &[t.dtype]);
    // Sums and products may meet flushed subnormals in f32; max and min compare exactly.
    let compute = match op {
        ReduceOp::Sum | ReduceOp::Product => super::subnormal_safe_accumulator(compute),
        _ => compute,
    };
    let window: usize = spec.dims.iter().product();
    if t.numel() == 0 || window == 0 {
        return super::creation::constant(&shape, out_type, identity(op, out_type));
    }
    let geo = geometry(t, &shape, spec, &what)?;
    let mut init = scalar_bytes(identity(op, out_type), compute.storage());
    init.resize(8, 0);
    let push = PushWords::new()
        .addr(&out.block)
        .addr(&t.block)
        .addr(&geo.block)
        .u(u32::from_le_bytes(init[0..4].try_into().unwrap()))
        .u(u32::from_le_bytes(init[4..8].try_into().unwrap()))
        .u(u32_of(out.numel(), "element count")?)
        .u(t.shape.len() as u32)
        .u(u32_of(window, "window size")?);
    let ops = op as u32 | t.dtype.code() << 8 | out_type.code() << 16;
    launch(
        Kernel::Window(compute),
        [ops, 0],
        &push,
        grid(out.numel() as u64),
        &[read(&t.block), read(&geo.block), write(&out.block)],
    )?;
    Ok(out)
}
