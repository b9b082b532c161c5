//! Nx `dot` with contracting and batch axes: operands are arranged as [batch, M, K] and
//! [batch, K, N] (a strided copy only when their layout differs) and multiplied by the
//! tiled matmul kernel. A transposed operand (the left one stored [batch, K, M], the right
//! one [batch, N, K], as in a gradient's `x^T dy`) is read in place where the kernel can.

use super::elementwise::as_type;
use super::layout::contiguous_strides;
use super::shape::gather_strided;
use super::{launch, read, u32_of, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::Tensor;

/// Output tile edge of matmul.comp.
const TILE: usize = 64;
/// Output tile edge of sgemm.comp.
const SGEMM_TILE: usize = 128;
/// Contracted elements per matmul launch (see the split-K comment in `dot`).
const K_CHUNK: usize = 16_384;

/// Bits of the matmul kernels' `flags` push word (`FLAG_*` in shaders/linalg/matmul.comp
/// and sgemm.comp; `tests/dot_layouts.rs` checks that they agree).
pub mod flags {
    /// Add C's current value (a later K range of a split contraction).
    pub const ACCUMULATE: u32 = 1;
    /// A stored k-major: [batch, K, M].
    pub const A_KMAJOR: u32 = 2;
    /// B stored n-major: [batch, N, K] (matmul.comp only).
    pub const B_NMAJOR: u32 = 4;
}

fn check_axes(t: &Tensor, contract: &[usize], batch: &[usize], side: &str) -> Result<()> {
    let rank = t.shape.len();
    let mut seen = vec![false; rank];
    for &a in contract.iter().chain(batch) {
        if a >= rank || seen[a] {
            return Err(crate::invalid!(
                "dot: {side} axes contract={contract:?} batch={batch:?} are invalid for shape {:?}",
                t.shape
            ));
        }
        seen[a] = true;
    }
    Ok(())
}

/// Whether `order` lists the axes in sequence.
fn in_sequence<'a>(order: impl IntoIterator<Item = &'a usize>) -> bool {
    order.into_iter().enumerate().all(|(i, &a)| i == a)
}

/// `t` rearranged so that `order` are its axes in sequence (no copy when already so).
fn arranged(t: &Tensor, order: &[usize]) -> Result<Tensor> {
    if in_sequence(order) {
        return Ok(t.clone());
    }
    let cs = contiguous_strides(&t.shape);
    let dims: Vec<usize> = order.iter().map(|&a| t.shape[a]).collect();
    let strides: Vec<isize> = order.iter().map(|&a| cs[a]).collect();
    gather_strided(t, &dims, &strides, 0)
}

/// Whether the register-blocked f32 kernel (sgemm.comp) serves this product: f32 in and
/// out, K and N multiples of 4 and 16-byte aligned buffers (every access is a vec4), and an
/// output of at least one full 128x128 tile. `NX_VULKAN_SGEMM=0` turns it off (to compare
/// kernels or rule this one out). Its exact-tile module, where the device needs one, keeps
/// f32 subnormals (sgemm.comp's header).
fn sgemm_fits(a: &Tensor, b: &Tensor, c: &Tensor, m: usize, n: usize, k: usize) -> bool {
    [a, b, c]
        .iter()
        .all(|t| t.dtype == DType::F32 && t.block.addr.is_multiple_of(16))
        && sgemm_shape(m, n, k)
}

/// The shapes sgemm.comp takes (see `sgemm_fits`), unless `NX_VULKAN_SGEMM=0`.
fn sgemm_shape(m: usize, n: usize, k: usize) -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let enabled =
        *ENABLED.get_or_init(|| std::env::var("NX_VULKAN_SGEMM").map_or(true, |v| v != "0"));
    enabled && k.is_multiple_of(4) && n.is_multiple_of(4) && m >= SGEMM_TILE && n >= SGEMM_TILE
}

/// Multiply-adds from which an f16 or bf16 product is done as an f32 one (see
/// `widen_halves`). On the H200 bf16 ran at 33.8 TFLOP/s widened against 22.6 on the
/// generic kernel at 4096 (2^36), but at 9.4 against 21.8 at 1024 (2^30), where the three
/// f32 temporaries per call cost more than they save.
const WIDEN_MIN_MACS: u64 = 1 << 34;

/// Whether an f16 or bf16 product is done as an f32 one (`dot_via_f32`): large products
/// of the shapes sgemm.comp takes that the cooperative-matrix kernel does not, padded or
/// not.
fn widen_halves(
    a: &Tensor,
    b: &Tensor,
    out_type: DType,
    m: usize,
    n: usize,
    k: usize,
) -> Result<bool> {
    let half = |t: DType| matches!(t, DType::F16 | DType::BF16);
    if !(half(a.dtype) && half(b.dtype) && (half(out_type) || out_type == DType::F32)) {
        return Ok(false);
    }
    let large = (m as u64) * (n as u64) * (k as u64) >= WIDEN_MIN_MACS;
    Ok(large
        && sgemm_shape(m, n, k)
        && !hgemm_shape(a.dtype, b.dtype, m, n, k)?
        && !hgemm_after_padding(a.dtype, b.dtype, out_type, m, n, k)?)
}

/// Nx `dot` computed as an f32 product: the operands widened to f32 (exact for f16, bf16
/// and f32), multiplied with f32 sums (sgemm.comp where the shapes fit), the result rounded
/// once to `out_type`. What `dot` does for large f16/bf16 products the cooperative-matrix
/// kernel does not take: the same f32 sums as the generic kernel, at the f32 kernel's
/// speed.
pub fn dot_via_f32(
    a: &Tensor,
    contract_a: &[usize],
    batch_a: &[usize],
    b: &Tensor,
    contract_b: &[usize],
    batch_b: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    let (a32, b32) = (as_type(a, DType::F32)?, as_type(b, DType::F32)?);
    let c = dot(
        &a32,
        contract_a,
        batch_a,
        &b32,
        contract_b,
        batch_b,
        DType::F32,
    )?;
    if out_type == DType::F32 {
        Ok(c)
    } else {
        as_type(&c, out_type)
    }
}

/// Output tile edge and K step of hgemm.comp.
const HGEMM_TILE: usize = 128;
const HGEMM_K_STEP: usize = 32;
/// Outputs from which hgemm.comp's modules of four 64x64 subgroups serve (see `dot`).
const HGEMM_WIDE_MIN_OUTPUTS: usize = 2048 * 2048;

/// Whether the cooperative-matrix kernel (hgemm.comp) serves this product: f16 (bf16)
/// operands with an f16 (bf16) result or f32 sums (the partial sums of a split K),
/// 16-byte aligned buffers and the shapes of `hgemm_shape`.
fn hgemm_fits(a: &Tensor, b: &Tensor, c: &Tensor, m: usize, n: usize, k: usize) -> Result<bool> {
    Ok((c.dtype == a.dtype || c.dtype == DType::F32)
        && [a, b, c].iter().all(|t| t.block.addr.is_multiple_of(16))
        && hgemm_shape(a.dtype, b.dtype, m, n, k)?)
}

/// f16 or bf16 operands (both the same), M and N multiples of 128, K of 32, on a device
/// whose cooperative matrices take them (`DeviceInfo::cooperative_matrix_f16` and
/// `cooperative_matrix_bf16`).
fn hgemm_shape(a: DType, b: DType, m: usize, n: usize, k: usize) -> Result<bool> {
    if a != b
        || !(m.is_multiple_of(HGEMM_TILE)
            && n.is_multiple_of(HGEMM_TILE)
            && k.is_multiple_of(HGEMM_K_STEP))
    {
        return Ok(false);
    }
    let info = crate::engine::engine()?.info();
    Ok(match a {
        DType::F16 => info.cooperative_matrix_f16,
        DType::BF16 => info.cooperative_matrix_bf16,
        _ => false,
    })
}

/// M, N and K rounded up to the cooperative-matrix kernel's tiles.
fn hgemm_padded_dims(m: usize, n: usize, k: usize) -> (usize, usize, usize) {
    let up = |x: usize, q: usize| x.div_ceil(q) * q;
    (up(m, HGEMM_TILE), up(n, HGEMM_TILE), up(k, HGEMM_K_STEP))
}

/// Whether a large f16 (bf16) product with an f16 (bf16) result, off the
/// cooperative-matrix kernel's tiles (M or N not a multiple of 128, or K of 32), takes it
/// after zero-padding: where the padded product is at most twice the work.
fn hgemm_after_padding(
    a: DType,
    b: DType,
    out_type: DType,
    m: usize,
    n: usize,
    k: usize,
) -> Result<bool> {
    let (mp, np, kp) = hgemm_padded_dims(m, n, k);
    let macs = |m: usize, n: usize, k: usize| (m as u64) * (n as u64) * (k as u64);
    Ok(out_type == a
        && (mp, np, kp) != (m, n, k)
        && macs(m, n, k) > F64_ACCUMULATION_MACS
        && macs(mp, np, kp) <= 2 * macs(m, n, k)
        && hgemm_shape(a, b, mp, np, kp)?)
}

/// The f16 (bf16) product of `a` ([batch.., m.., k..]) and `b` ([batch.., k.., n..]) on
/// the cooperative-matrix kernel, the operands zero-padded to its tiles (the padded
/// products are exact zeros: no sum changes) and the result cut back to `shape`.
fn hgemm_padded(
    a: &Tensor,
    b: &Tensor,
    [batch, m, n, k]: [usize; 4],
    shape: &[usize],
) -> Result<Tensor> {
    let (mp, np, kp) = hgemm_padded_dims(m, n, k);
    let half = a.dtype;
    let zero = super::creation::constant(&[], half, super::creation::Scalar::Int(0))?;
    let grow = |t: &Tensor, dims: [usize; 3], to: [usize; 3]| {
        let config: Vec<(isize, isize, usize)> = dims
            .iter()
            .zip(to)
            .map(|(&d, t)| (0, (t - d) as isize, 0))
            .collect();
        super::shape::pad(&t.reshape(&dims)?, &zero, &config, half)
    };
    let pa = grow(a, [batch, m, k], [batch, mp, kp])?;
    let pb = grow(b, [batch, k, n], [batch, kp, np])?;
    let c = dot(&pa, &[2], &[0], &pb, &[1], &[0], half)?;
    super::shape::slice(&c, &[0, 0, 0], &[batch, m, n], &[1, 1, 1])?.reshape(shape)
}

/// Dots of at most this many multiply-adds that the tiled sgemm kernel does not take
/// accumulate f32 in f64 where the device has it: launch-bound sizes, where the f64 rate
/// of consumer GPUs costs nothing noticeable.
const F64_ACCUMULATION_MACS: u64 = 1 << 24;

/// Nx `dot(a, contract_a, batch_a, b, contract_b, batch_b)` with output type `out_type`.
pub fn dot(
    a: &Tensor,
    contract_a: &[usize],
    batch_a: &[usize],
    b: &Tensor,
    contract_b: &[usize],
    batch_b: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    check_axes(a, contract_a, batch_a, "left")?;
    check_axes(b, contract_b, batch_b, "right")?;
    if super::complex::involved(&[a.dtype, b.dtype, out_type]) {
        return super::complex::bilinear(a, b, out_type, |x, y, t| {
            dot(x, contract_a, batch_a, y, contract_b, batch_b, t)
        });
    }
    if contract_a.len() != contract_b.len() || batch_a.len() != batch_b.len() {
        return Err(crate::invalid!(
            "dot: contracting axes {contract_a:?}/{contract_b:?} or batch axes {batch_a:?}/{batch_b:?} do not pair up"
        ));
    }
    for (&x, &y) in contract_a
        .iter()
        .zip(contract_b)
        .chain(batch_a.iter().zip(batch_b))
    {
        if a.shape[x] != b.shape[y] {
            return Err(crate::invalid!(
                "dot: axis {x} of shape {:?} does not match axis {y} of shape {:?}",
                a.shape,
                b.shape
            ));
        }
    }
    let free_a: Vec<usize> = (0..a.shape.len())
        .filter(|x| !contract_a.contains(x) && !batch_a.contains(x))
        .collect();
    let free_b: Vec<usize> = (0..b.shape.len())
        .filter(|x| !contract_b.contains(x) && !batch_b.contains(x))
        .collect();
    let dims = |t: &Tensor, axes: &[usize]| -> usize { axes.iter().map(|&x| t.shape[x]).product() };
    let (batch, m, k, n) = (
        dims(a, batch_a),
        dims(a, &free_a),
        dims(a, contract_a),
        dims(b, &free_b),
    );
    if widen_halves(a, b, out_type, m, n, k)? {
        return dot_via_f32(a, contract_a, batch_a, b, contract_b, batch_b, out_type);
    }
    let mut shape: Vec<usize> = batch_a.iter().map(|&x| a.shape[x]).collect();
    shape.extend(free_a.iter().map(|&x| a.shape[x]));
    shape.extend(free_b.iter().map(|&x| b.shape[x]));
    let order_a: Vec<usize> = batch_a
        .iter()
        .chain(&free_a)
        .chain(contract_a)
        .copied()
        .collect();
    let order_b: Vec<usize> = batch_b
        .iter()
        .chain(contract_b)
        .chain(&free_b)
        .copied()
        .collect();
    if hgemm_after_padding(a.dtype, b.dtype, out_type, m, n, k)? {
        let (la, lb) = (arranged(a, &order_a)?, arranged(b, &order_b)?);
        return hgemm_padded(&la, &lb, [batch, m, n, k], &shape);
    }
    let out = Tensor::empty(&shape, out_type)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    // Transposed operands stay in place, except for the cooperative-matrix kernels
    // (halves) and, for sgemm.comp, a right one or a left one whose M is not a multiple
    // of 4 (its vec4s run along M).
    let halves = [a.dtype, b.dtype]
        .iter()
        .any(|t| matches!(t, DType::F16 | DType::BF16));
    let sgemm_likely = [a.dtype, b.dtype, out_type]
        .iter()
        .all(|&t| t == DType::F32)
        && sgemm_shape(m, n, k);
    let a_kmajor = !halves
        && !in_sequence(&order_a)
        && in_sequence(batch_a.iter().chain(contract_a).chain(&free_a))
        && (!sgemm_likely || m.is_multiple_of(4));
    let b_nmajor = !halves
        && !sgemm_likely
        && !in_sequence(&order_b)
        && in_sequence(batch_b.iter().chain(&free_b).chain(contract_b));
    let la = if a_kmajor {
        a.clone()
    } else {
        arranged(a, &order_a)?
    };
    let lb = if b_nmajor {
        b.clone()
    } else {
        arranged(b, &order_b)?
    };
    let layout =
        if a_kmajor { flags::A_KMAJOR } else { 0 } | if b_nmajor { flags::B_NMAJOR } else { 0 };
    let compute = DType::merge(DType::merge(a.dtype, b.dtype), out_type).compute();
    let compute = super::loading(compute, &[a.dtype, b.dtype]);
    // Products the tiled f32 kernel does not take (small or narrow ones, launch-bound)
    // accumulate in f64 where the device has it, as Nx.BinaryBackend does.
    let small = (m as u64) * (n as u64) * (k as u64) <= F64_ACCUMULATION_MACS;
    let compute = if small && !sgemm_fits(&la, &lb, &out, m, n, k) {
        super::float_accumulator(compute)
    } else {
        compute
    };
    // Long contractions run as several launches over K ranges, each adding to C: a
    // launch's loops stay short (lavapipe stops shader loops after ~65k iterations)
    // and the partial sums stay in the compute type when the output is narrower.
    let split = k > K_CHUNK;
    let target = if split && out_type != compute.storage() {
        Tensor::empty(&shape, compute.storage())?
    } else {
        out.clone()
    };
    let ops = a.dtype.code() | b.dtype.code() << 8 | target.dtype.code() << 16;
    let (kernel, tile) = if !b_nmajor && sgemm_fits(&la, &lb, &target, m, n, k) {
        (Kernel::Sgemm(a_kmajor), (SGEMM_TILE, SGEMM_TILE))
    } else if !small && layout == 0 && hgemm_fits(&la, &lb, &target, m, n, k)? {
        // Four subgroups of 64x64 with two stages where there are enough tiles: on the
        // H200 f16 at 255-258 TFLOP/s at 4096 and 249-255 at 2048 against 248-251 and
        // 212-219 with eight subgroups of 64x64 on 128x256 tiles and one stage (raw
        // nvidia-h200-2026-12-01zc, call 7); eight subgroups of 64x32 win at 1024.
        let wide = m * n >= HGEMM_WIDE_MIN_OUTPUTS;
        let kernel = if la.dtype == DType::BF16 {
            Kernel::HgemmBf16(wide, target.dtype == DType::BF16)
        } else {
            Kernel::Hgemm(target.dtype == DType::F16, wide)
        };
        (kernel, (HGEMM_TILE, HGEMM_TILE))
    } else {
        (
            Kernel::Matmul(super::subnormal_safe_accumulator(compute)),
            (TILE, TILE),
        )
    };
    launch_products(
        kernel,
        tile,
        ops,
        layout,
        &la,
        &lb,
        &target,
        [batch, m, n, k],
    )?;
    if target.dtype != out_type {
        return as_type(&target, out_type);
    }
    Ok(out)
}

/// Launches of `kernel` computing `target` = `la` x `lb` (`[batch, m, n, k]`, operands
/// stored as `layout`'s `flags` say), in batches of at most 65,535 and K ranges of
/// `K_CHUNK` (each later one adding to C).
#[allow(clippy::too_many_arguments)]
fn launch_products(
    kernel: Kernel,
    tile: (usize, usize),
    ops: u32,
    layout: u32,
    la: &Tensor,
    lb: &Tensor,
    target: &Tensor,
    [batch, m, n, k]: [usize; 4],
) -> Result<()> {
    let elem = target.dtype.size() as u64;
    let (asz, bsz) = (la.dtype.size() as u64, lb.dtype.size() as u64);
    // Batches beyond the 65,535 groups of the z axis go in several launches, each with
    // its operands offset (addresses are per launch).
    let per_launch = 65_535usize;
    for (b0, k0) in (0..batch)
        .step_by(per_launch)
        .flat_map(|b0| (0..k.max(1)).step_by(K_CHUNK).map(move |k0| (b0, k0)))
    {
        let nb = (batch - b0).min(per_launch);
        let k1 = (k0 + K_CHUNK).min(k);
        let push = PushWords::new()
            .addr_at(&target.block, (b0 * m * n) as u64 * elem)
            .addr_at(&la.block, (b0 * m * k) as u64 * asz)
            .addr_at(&lb.block, (b0 * k * n) as u64 * bsz)
            .u(u32_of(m, "rows")?)
            .u(u32_of(n, "columns")?)
            .u(u32_of(k, "contracted size")?)
            .u(k0 as u32)
            .u(k1 as u32)
            .u(layout | if k0 > 0 { flags::ACCUMULATE } else { 0 });
        let groups = [
            u32_of(n.div_ceil(tile.1), "column tiles")?,
            u32_of(m.div_ceil(tile.0), "row tiles")?,
            nb as u32,
        ];
        if groups[1] > 65_535 || groups[0] > 65_535 {
            return Err(crate::unsupported!(
                "dot: a {m}x{n} output exceeds the matmul grid"
            ));
        }
        let accesses = [read(&la.block), read(&lb.block), write(&target.block)];
        launch(kernel, [ops, 0], &push, groups, &accesses)?;
    }
    Ok(())
}
