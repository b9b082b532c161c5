//! Nx `conv`: input and kernel permuted to [batch, channels, spatial...] and
//! [filters, channels / feature groups, spatial...], the input padded (with input
//! dilation as interior padding) and the kernel dilated on the host side of the engine,
//! then one direct-convolution kernel (conv.comp) and the output permutation.

use super::creation::{constant, Scalar};
use super::shape::{pad, transpose};
use super::{grid, launch, read, u32_of, u32_tensor, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::Tensor;

/// Nx's conv options, spatial lists with one entry per spatial axis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvSpec {
    pub strides: Vec<usize>,
    /// Low and high padding of each spatial axis (negative crops).
    pub padding: Vec<(isize, isize)>,
    pub input_dilation: Vec<usize>,
    pub kernel_dilation: Vec<usize>,
    pub feature_groups: usize,
    pub batch_groups: usize,
    pub input_permutation: Vec<usize>,
    pub kernel_permutation: Vec<usize>,
    pub output_permutation: Vec<usize>,
}

/// Nx `conv(input, kernel, opts)` with output type `out_type`, as `Nx.BinaryBackend`
/// computes it (including feature and batch groups).
pub fn conv(input: &Tensor, kernel: &Tensor, spec: &ConvSpec, out_type: DType) -> Result<Tensor> {
    if super::complex::involved(&[input.dtype, kernel.dtype, out_type]) {
        return super::complex::bilinear(input, kernel, out_type, |x, y, t| conv(x, y, spec, t));
    }
    let rank = input.shape.len();
    let spatial = rank.saturating_sub(2);
    let bad = |why: &str| {
        crate::invalid!(
            "conv: input {:?} and kernel {:?} with {spec:?}: {why}",
            input.shape,
            kernel.shape
        )
    };
    if rank < 2 || kernel.shape.len() != rank {
        return Err(bad("input and kernel need the same rank, at least 2"));
    }
    if [
        spec.strides.len(),
        spec.padding.len(),
        spec.input_dilation.len(),
        spec.kernel_dilation.len(),
    ]
    .iter()
    .any(|&l| l != spatial)
        || [
            &spec.input_permutation,
            &spec.kernel_permutation,
            &spec.output_permutation,
        ]
        .iter()
        .any(|p| p.len() != rank)
    {
        return Err(bad(
            "options need one entry per spatial axis (permutations: per axis)",
        ));
    }
    if spec
        .strides
        .iter()
        .chain(&spec.input_dilation)
        .chain(&spec.kernel_dilation)
        .any(|&x| x == 0)
        || spec.feature_groups == 0
        || spec.batch_groups == 0
    {
        return Err(bad("strides, dilations and group sizes must be positive"));
    }
    let t = transpose(input, &spec.input_permutation)?;
    let k = transpose(kernel, &spec.kernel_permutation)?;
    let (n, c, o, ck) = (t.shape[0], t.shape[1], k.shape[0], k.shape[1]);
    let (g, b) = (spec.feature_groups, spec.batch_groups);
    if c != ck * g || o % g != 0 || o % b != 0 || n % b != 0 {
        return Err(bad("channels must equal kernel channels x feature groups, and filters and batch divide by the groups"));
    }
    let zero = |ty: DType| constant(&[], ty, Scalar::Int(0));
    let mut in_cfg = vec![(0, 0, 0), (0, 0, 0)];
    in_cfg.extend((0..spatial).map(|d| {
        (
            spec.padding[d].0,
            spec.padding[d].1,
            spec.input_dilation[d] - 1,
        )
    }));
    let t = pad(&t, &zero(t.dtype)?, &in_cfg, t.dtype)?;
    let mut k_cfg = vec![(0, 0, 0), (0, 0, 0)];
    k_cfg.extend((0..spatial).map(|d| (0, 0, spec.kernel_dilation[d] - 1)));
    let k = pad(&k, &zero(k.dtype)?, &k_cfg, k.dtype)?;
    let out_spatial: Vec<usize> = (0..spatial)
        .map(|d| {
            let (p, w) = (t.shape[d + 2], k.shape[d + 2]);
            if p < w {
                0
            } else {
                (p - w) / spec.strides[d] + 1
            }
        })
        .collect();
    let mut canonical = vec![n / b, o];
    canonical.extend(&out_spatial);
    let r = Tensor::empty(&canonical, out_type)?;
    if r.numel() > 0 {
        let mut geo: Vec<u32> = Vec::with_capacity(7 + 4 * spatial);
        for v in [n, c, o, ck, b, g, spatial] {
            geo.push(u32_of(v, "conv dimension")?);
        }
        for (d, &out_dim) in out_spatial.iter().enumerate() {
            for v in [t.shape[d + 2], out_dim, k.shape[d + 2], spec.strides[d]] {
                geo.push(u32_of(v, "conv dimension")?);
            }
        }
        u32_of(t.numel(), "input size")?;
        u32_of(k.numel(), "kernel size")?;
        let geo = u32_tensor(&geo)?;
        let compute = super::subnormal_safe_accumulator(super::loading(
            DType::merge(DType::merge(t.dtype, k.dtype), out_type).compute(),
            &[t.dtype, k.dtype],
        ));
        let push = PushWords::new()
            .addr(&r.block)
            .addr(&t.block)
            .addr(&k.block)
            .addr(&geo.block)
            .u(u32_of(r.numel(), "element count")?);
        launch(
            Kernel::Conv(compute),
            [
                t.dtype.code() | k.dtype.code() << 8 | out_type.code() << 16,
                0,
            ],
            &push,
            grid(r.numel() as u64),
            &[
                read(&t.block),
                read(&k.block),
                read(&geo.block),
                write(&r.block),
            ],
        )?;
    }
    // As Nx.BinaryBackend: the result is the canonical one transposed by the inverse of
    // the output permutation.
    let mut inverse: Vec<usize> = (0..rank).collect();
    inverse.sort_by_key(|&i| spec.output_permutation[i]);
    transpose(&r, &inverse)
}
