//! `sort` and `argsort` along an axis: a stable bitonic sort of rows (the axis moved last),
//! in shared memory for rows up to 2048 elements, else over global memory one network
//! step per launch. Order as Nx.BinaryBackend: ascending puts NaN last, descending first;
//! equal elements keep their order. Values are moved by the sorted indices, as bits.

use super::elementwise::as_type;
use super::shape::transpose;
use super::{grid, grid_groups, launch, loading, read, u32_of, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::Tensor;

const MODE_LOCAL: u32 = 0;
const MODE_INIT: u32 = 1;
const MODE_STEP: u32 = 2;
const MODE_FINISH: u32 = 3;
const MODE_VALUES: u32 = 4;
/// Longest padded row the shared-memory sort takes (`LOCAL_MAX` in sort.comp).
const LOCAL_MAX: usize = 2048;

/// The operands of one sort launch.
struct Rows<'a> {
    input: &'a Tensor,
    idx: &'a Tensor,
    rows: usize,
    n: usize,
    p: usize,
    spec: u32,
}

impl Rows<'_> {
    fn launch(
        &self,
        mode: u32,
        scratch: Option<(&Tensor, &Tensor)>,
        out: Option<&Tensor>,
        kj: (usize, usize),
        groups: [u32; 3],
    ) -> Result<()> {
        let (keys, sidx) = scratch.unwrap_or((self.idx, self.idx));
        let out = out.unwrap_or(self.idx);
        let push = PushWords::new()
            .addr(&out.block)
            .addr(&self.input.block)
            .addr(&self.idx.block)
            .addr(&keys.block)
            .addr(&sidx.block)
            .u(u32_of(self.rows, "rows")?)
            .u(u32_of(self.n, "row length")?)
            .u(u32_of(self.p, "padded row length")?)
            .u(kj.0 as u32)
            .u(kj.1 as u32);
        let mut accesses = vec![read(&self.input.block)];
        match mode {
            MODE_LOCAL => accesses.push(write(&self.idx.block)),
            MODE_INIT | MODE_STEP => {
                accesses.push(write(&keys.block));
                accesses.push(write(&sidx.block));
            }
            MODE_FINISH => {
                accesses.push(read(&sidx.block));
                accesses.push(write(&self.idx.block));
            }
            _ => {
                accesses.push(read(&self.idx.block));
                accesses.push(write(&out.block));
            }
        }
        let kernel = Kernel::Sort(loading(self.input.dtype.compute(), &[self.input.dtype]));
        launch(kernel, [mode | self.spec, 0], &push, groups, &accesses)
    }
}

/// `t` with `axis` moved last (a copy when it is not last already).
fn axis_last(t: &Tensor, axis: usize) -> Result<(Tensor, Vec<usize>)> {
    let rank = t.shape.len();
    let mut perm: Vec<usize> = (0..rank).filter(|&a| a != axis).collect();
    perm.push(axis);
    Ok((transpose(t, &perm)?, perm))
}

/// Undoes [`axis_last`].
fn axis_back(t: &Tensor, perm: &[usize]) -> Result<Tensor> {
    let mut inverse = vec![0; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inverse[p] = i;
    }
    transpose(t, &inverse)
}

/// Sorted u32 indices of each row of `rows` (contiguous, last axis sorted) and the sort.
fn sort_rows(rows_t: &Tensor, desc: bool, want_values: bool) -> Result<(Tensor, Option<Tensor>)> {
    let n = *rows_t.shape.last().unwrap_or(&1);
    let rows = rows_t.numel().checked_div(n).unwrap_or(0);
    let idx = Tensor::empty(&rows_t.shape, DType::U32)?;
    if rows == 0 || n == 0 {
        let values = if want_values {
            Some(rows_t.clone())
        } else {
            None
        };
        return Ok((idx, values));
    }
    let p = n.next_power_of_two();
    u32_of(rows * p, "padded sort size")?;
    let r = Rows {
        input: rows_t,
        idx: &idx,
        rows,
        n,
        p,
        spec: rows_t.dtype.code() << 8 | (desc as u32) << 16,
    };
    if p <= LOCAL_MAX {
        r.launch(MODE_LOCAL, None, None, (0, 0), grid_groups(rows as u64))?;
    } else {
        let compute = loading(rows_t.dtype.compute(), &[rows_t.dtype]);
        let keys = Tensor::empty(&[rows * p], compute.storage())?;
        let sidx = Tensor::empty(&[rows * p], DType::U32)?;
        let s = Some((&keys, &sidx));
        r.launch(MODE_INIT, s, None, (0, 0), grid((rows * p) as u64))?;
        let mut k = 2;
        while k <= p {
            let mut j = k / 2;
            while j > 0 {
                r.launch(MODE_STEP, s, None, (k, j), grid((rows * p / 2) as u64))?;
                j /= 2;
            }
            k *= 2;
        }
        r.launch(MODE_FINISH, s, None, (0, 0), grid((rows * n) as u64))?;
    }
    let values = if want_values {
        let out = Tensor::empty(&rows_t.shape, rows_t.dtype)?;
        r.launch(
            MODE_VALUES,
            None,
            Some(&out),
            (0, 0),
            grid((rows * n) as u64),
        )?;
        Some(out)
    } else {
        None
    };
    Ok((idx, values))
}

fn check_axis(op: &str, t: &Tensor, axis: usize) -> Result<()> {
    if axis >= t.shape.len().max(1) {
        return Err(crate::invalid!(
            "{op}: axis {axis} is out of range for shape {:?}",
            t.shape
        ));
    }
    Ok(())
}

/// Nx `sort(t, axis, direction)`.
pub fn sort(t: &Tensor, axis: usize, desc: bool) -> Result<Tensor> {
    check_axis("sort", t, axis)?;
    if t.shape.is_empty() {
        return Ok(t.clone());
    }
    let (rows_t, perm) = axis_last(t, axis)?;
    let (_, values) = sort_rows(&rows_t, desc, true)?;
    axis_back(&values.expect("values were asked for"), &perm)
}

/// Nx `argsort(t, axis, direction)` with indices of `out_type`.
pub fn argsort(t: &Tensor, axis: usize, desc: bool, out_type: DType) -> Result<Tensor> {
    check_axis("argsort", t, axis)?;
    if !out_type.is_int() {
        return Err(crate::invalid!(
            "argsort: indices must be of an integer type, got {}",
            out_type.name()
        ));
    }
    if t.shape.is_empty() {
        return crate::ops::creation::constant(&[], out_type, crate::ops::creation::Scalar::Int(0));
    }
    let (rows_t, perm) = axis_last(t, axis)?;
    let (idx, _) = sort_rows(&rows_t, desc, false)?;
    axis_back(&as_type(&idx, out_type)?, &perm)
}
