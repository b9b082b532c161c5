//! Strided element copies, the engine of every layout op (transpose, broadcast, slice,
//! pad, concatenate, ...): a plain kernel for any strides and a tiled one for transposes.

use super::layout::simplify;
use super::{grid, i32_of, launch, read, u32_of, write, PushWords, MAX_GROUPS};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// Records a strided copy over the index space `dims`: for every coordinate `c`,
/// `dst[dst_off + c.dst_strides] = src[src_off + c.src_strides]` (element units).
pub fn copy_strided(
    src: &Tensor,
    src_strides: &[isize],
    src_off: isize,
    dst: &Tensor,
    dst_strides: &[isize],
    dst_off: isize,
    dims: &[usize],
) -> Result<()> {
    let n = numel(dims)?;
    if n == 0 {
        return Ok(());
    }
    if src.dtype.size() != dst.dtype.size() {
        return Err(crate::invalid!(
            "copy between {} and {} elements",
            src.dtype.name(),
            dst.dtype.name()
        ));
    }
    // Every width, c128's 16 bytes included, moves one element per index.
    let width = src.dtype.size();
    let (d, s) = simplify(dims, &[src_strides.to_vec(), dst_strides.to_vec()])?;
    // The tile of 16-byte elements takes 32 x 33 x 16 bytes of shared memory, more than
    // the 16 KiB Vulkan guarantees.
    let tile_fits = (TILE * (TILE + 1) * width) as u64
        <= crate::engine::engine()?.info().max_shared_memory as u64;
    if let Some(tiled) = TiledCopy::find(&d, &s[0], &s[1]).filter(|_| tile_fits) {
        return tiled.launch(src, src_off, dst, dst_off, width as u8);
    }
    let push = PushWords::new()
        .addr(&dst.block)
        .addr(&src.block)
        .u(u32_of(n, "element count")?)
        .u(d.len() as u32)
        .i(i32_of(dst_off, "offset")?)
        .i(i32_of(src_off, "offset")?)
        .array(d.iter().map(|&x| x as u32))
        .array(s[0].iter().map(|&x| x as i32 as u32))
        .array(s[1].iter().map(|&x| x as i32 as u32));
    launch(
        Kernel::Copy(width as u8),
        [0, 0],
        &push,
        grid(n as u64),
        &[read(&src.block), write(&dst.block)],
    )
}

/// Batch axes the tiled copy kernel walks besides its two tile axes.
const TILED_BATCH_RANK: usize = 4;
/// The tiled kernel's tile edge; below it on either tile axis the plain copy is as good.
const TILE: usize = 32;

/// A copy whose source is contiguous along axis `b` and destination along another axis
/// `a`: the shape of a transpose, which the tiled kernel moves with both sides coalesced.
struct TiledCopy {
    a: usize,
    b: usize,
    dims: Vec<usize>,
    src: Vec<isize>,
    dst: Vec<isize>,
}

impl TiledCopy {
    /// The tiled form of a simplified copy (`dims`, source and destination strides), if
    /// it has one worth using.
    fn find(dims: &[usize], src: &[isize], dst: &[isize]) -> Option<TiledCopy> {
        let a = dst.iter().position(|&x| x == 1)?;
        let b = src.iter().position(|&x| x == 1)?;
        let groups_fit = |n: usize| n.div_ceil(TILE) <= MAX_GROUPS as usize;
        let useful = a != b
            && dims[a] >= TILE / 2
            && dims[b] >= TILE / 2
            && groups_fit(dims[a])
            && groups_fit(dims[b])
            && dims.len() - 2 <= TILED_BATCH_RANK;
        useful.then(|| TiledCopy {
            a,
            b,
            dims: dims.to_vec(),
            src: src.to_vec(),
            dst: dst.to_vec(),
        })
    }

    fn launch(
        &self,
        src: &Tensor,
        src_off: isize,
        dst: &Tensor,
        dst_off: isize,
        width: u8,
    ) -> Result<()> {
        let batch_axes: Vec<usize> = (0..self.dims.len())
            .filter(|&k| k != self.a && k != self.b)
            .collect();
        let batch: usize = batch_axes.iter().map(|&k| self.dims[k]).product();
        let pick =
            |v: &[isize]| -> Vec<u32> { batch_axes.iter().map(|&k| v[k] as i32 as u32).collect() };
        let push = PushWords::new()
            .addr(&dst.block)
            .addr(&src.block)
            .u(u32_of(self.dims[self.a], "tile axis")?)
            .u(u32_of(self.dims[self.b], "tile axis")?)
            .i(i32_of(self.src[self.a], "stride")?)
            .i(i32_of(self.dst[self.b], "stride")?)
            .i(i32_of(src_off, "offset")?)
            .i(i32_of(dst_off, "offset")?)
            .u(u32_of(batch, "batch")?)
            .u(batch_axes.len() as u32)
            .array_n(
                batch_axes.iter().map(|&k| self.dims[k] as u32),
                TILED_BATCH_RANK,
            )
            .array_n(pick(&self.src), TILED_BATCH_RANK)
            .array_n(pick(&self.dst), TILED_BATCH_RANK);
        let groups = [
            self.dims[self.b].div_ceil(TILE) as u32,
            self.dims[self.a].div_ceil(TILE) as u32,
            batch.min(MAX_GROUPS as usize) as u32,
        ];
        launch(
            Kernel::Transpose(width),
            [0, 0],
            &push,
            groups,
            &[read(&src.block), write(&dst.block)],
        )
    }
}
