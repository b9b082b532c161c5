//! Fused programs: a chain of element-wise ops and reductions over the trailing axes,
//! run as one kernel (`shaders/fused/fused.comp`). Nx.Vulkan.Compiler finds such groups
//! in a `defn` expression; each becomes one launch instead of one per op, with the
//! intermediate values kept in registers. Softmax (max, subtract, exp, sum, divide) is
//! three passes over each row in one kernel instead of five launches and four
//! intermediate tensors.
//!
//! Every op rounds as its unfused kernel does (f32 math follows `NX_VULKAN_F32_MATH`,
//! f32 sums accumulate in f64 where the device has it), so fusing changes no result but
//! for the order of a sum's additions.

use super::elementwise::{BinaryOp, UnaryOp};
use super::layout::{broadcast_strides, contiguous_strides};
use super::reduce::ReduceOp;
use super::shape::gather_strided;
use super::{f32_via_f64, grid_groups, read, u32_of, write, PushWords};
use crate::dtype::DType;
use crate::engine::engine;
use crate::error::Result;
use crate::exec::Access;
use crate::kernels::{Kernel, KernelKey, Source};
use crate::tensor::{numel, Tensor};

/// Most slots a program may have (`MAX_SLOTS` in fused.comp).
pub const MAX_SLOTS: usize = 32;
/// Most inputs (`MAX_INPUTS`).
pub const MAX_INPUTS: usize = 8;
/// Most reductions (`MAX_REDUCTIONS`).
pub const MAX_REDUCTIONS: usize = 4;
/// Elements per workgroup of an element-wise program (`TILE`).
const TILE: u64 = 1024;

/// One slot of a program; operands name earlier slots.
#[derive(Clone, Copy, PartialEq, Debug)]
pub enum FusedOp {
    /// The program's input of this index, broadcast to the domain (Nx's right-aligned
    /// rule).
    Input(usize),
    /// A number, converted to the program's type.
    Constant(f64),
    /// sum, reduce_max or reduce_min over each row's columns.
    Reduce(ReduceOp, usize),
    /// negate, abs, exp, log or sqrt.
    Unary(UnaryOp, usize),
    /// add, subtract, multiply, divide, max or min.
    Binary(BinaryOp, usize, usize),
}

/// A program over the domain `shape`: the first `row_axes` axes are rows, the others
/// columns, which reductions fold. The last slot is the output: over the whole domain,
/// or one value per row when `per_row`.
#[derive(Clone, PartialEq, Debug)]
pub struct FusedProgram {
    /// f32 or f64: every input, slot and the output have this type.
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub row_axes: usize,
    pub slots: Vec<FusedOp>,
    pub per_row: bool,
}

/// A reduction's code in FLAGS (2 bits per phase), for the three fused.comp folds.
fn reduce_code(r: ReduceOp) -> Option<u32> {
    match r {
        ReduceOp::Sum => Some(0),
        ReduceOp::Max => Some(1),
        ReduceOp::Min => Some(2),
        _ => None,
    }
}

impl FusedOp {
    /// Op code (`F_*` in fused.comp); `None` for an op the fused kernel lacks.
    fn code(self) -> Option<u32> {
        use BinaryOp as B;
        use UnaryOp as U;
        Some(match self {
            FusedOp::Input(_) => 1,
            FusedOp::Constant(_) => 2,
            FusedOp::Reduce(r, _) => 3 + reduce_code(r)?,
            FusedOp::Unary(u, _) => match u {
                U::Negate => 10,
                U::Abs => 11,
                U::Exp => 12,
                U::Log => 13,
                U::Sqrt => 14,
                _ => return None,
            },
            FusedOp::Binary(b, _, _) => match b {
                B::Add => 20,
                B::Subtract => 21,
                B::Multiply => 22,
                B::Divide => 23,
                B::Max => 24,
                B::Min => 25,
                _ => return None,
            },
        })
    }

    fn operands(self) -> Vec<usize> {
        match self {
            FusedOp::Input(_) | FusedOp::Constant(_) => vec![],
            FusedOp::Reduce(_, a) | FusedOp::Unary(_, a) => vec![a],
            FusedOp::Binary(_, a, b) => vec![a, b],
        }
    }
}

/// How the kernel reads an input (`mode` in fused.comp).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Access2d {
    Full = 0,
    Row = 1,
    Column = 2,
    Scalar = 3,
}

/// Whether `strides` walk `dims` as the contiguous `expected` does (size-1 axes ignored).
fn walks(dims: &[usize], strides: &[isize], expected: &[isize]) -> bool {
    dims.iter()
        .zip(strides.iter().zip(expected))
        .all(|(&d, (&s, &e))| d == 1 || s == e)
}

/// The access of an input with broadcast `strides` over the domain split at `k`, if the
/// kernel can read it in place.
fn access_of(shape: &[usize], k: usize, strides: &[isize]) -> Option<Access2d> {
    let zero = vec![0isize; shape.len()];
    let (rows, cols) = shape.split_at(k);
    let (rs, cs) = strides.split_at(k);
    if walks(shape, strides, &zero) {
        Some(Access2d::Scalar)
    } else if walks(shape, strides, &contiguous_strides(shape)) {
        Some(Access2d::Full)
    } else if walks(cols, cs, &zero[k..]) && walks(rows, rs, &contiguous_strides(rows)) {
        Some(Access2d::Row)
    } else if walks(rows, rs, &zero[..k]) && walks(cols, cs, &contiguous_strides(cols)) {
        Some(Access2d::Column)
    } else {
        None
    }
}

/// Runs `program` on `inputs`; the result has the domain's shape, or its row axes'
/// shape when the program is per row (the caller reshapes to Nx's output shape).
pub fn fused(program: &FusedProgram, inputs: &[&Tensor]) -> Result<Tensor> {
    let plan = Plan::new(program, inputs)?;
    let out_shape = if program.per_row {
        program.shape[..program.row_axes].to_vec()
    } else {
        program.shape.clone()
    };
    let out = Tensor::empty(&out_shape, program.dtype)?;
    if out.numel() == 0 {
        return Ok(out);
    }
    // Inputs the kernel cannot read in place are broadcast to the domain first.
    let mut owned = Vec::new();
    let mut modes = Vec::new();
    for (t, strides) in inputs.iter().zip(&plan.strides) {
        match access_of(&program.shape, program.row_axes, strides) {
            Some(m) => {
                owned.push((*t).clone());
                modes.push(m);
            }
            None => {
                owned.push(gather_strided(t, &program.shape, strides, 0)?);
                modes.push(Access2d::Full);
            }
        }
    }
    let constants = plan.constants(program, &modes);
    let mut push = PushWords::new().addr(&out.block);
    for t in &owned {
        push = push.addr(&t.block);
    }
    for _ in owned.len()..MAX_INPUTS {
        push = push.u(0).u(0);
    }
    let push = push
        .u(u32_of(plan.rows, "fused rows")?)
        .u(u32_of(plan.cols, "fused columns")?);
    let groups = if plan.reductions == 0 && !program.per_row {
        grid_groups(((plan.rows * plan.cols) as u64).div_ceil(TILE))
    } else {
        grid_groups(plan.rows as u64)
    };
    let mut accesses: Vec<Access<'_>> = owned.iter().map(|t| read(&t.block)).collect();
    accesses.push(write(&out.block));
    let e = engine()?;
    let key = KernelKey {
        source: Source::Specialized(Kernel::Fused(program.dtype.compute()), constants),
        spec: [0, 0],
    };
    let pipeline = e.kernels.get_key(&key)?;
    e.stream.dispatch(
        &pipeline,
        e.kernels.layout(),
        push.words(),
        push.addr_words(),
        groups,
        &accesses,
    )?;
    Ok(out)
}

/// A checked program: its geometry, each input's strides and each slot's phase.
struct Plan {
    rows: usize,
    cols: usize,
    reductions: usize,
    strides: Vec<Vec<isize>>,
    /// First phase each slot can run in (reductions: their index).
    phase: Vec<usize>,
}

impl Plan {
    fn new(p: &FusedProgram, inputs: &[&Tensor]) -> Result<Plan> {
        if !matches!(p.dtype, DType::F32 | DType::F64) {
            return Err(crate::invalid!(
                "fused programs compute in f32 or f64, not {}",
                p.dtype.name()
            ));
        }
        if p.slots.is_empty() || p.slots.len() > MAX_SLOTS {
            return Err(crate::invalid!(
                "a fused program has 1 to {MAX_SLOTS} slots, not {}",
                p.slots.len()
            ));
        }
        if inputs.len() > MAX_INPUTS {
            return Err(crate::invalid!(
                "a fused program takes at most {MAX_INPUTS} inputs, not {}",
                inputs.len()
            ));
        }
        if p.row_axes > p.shape.len() {
            return Err(crate::invalid!(
                "fused program: {} row axes in a domain of shape {:?}",
                p.row_axes,
                p.shape
            ));
        }
        let rows = numel(&p.shape[..p.row_axes])?;
        let cols = numel(&p.shape[p.row_axes..])?;
        // The kernel's 32-bit tile and column loops must not wrap.
        if numel(&p.shape)? as u64 > u32::MAX as u64 - TILE {
            return Err(crate::unsupported!(
                "fused program over {:?}: more than 2^32 - {TILE} elements",
                p.shape
            ));
        }
        if p.per_row && cols == 0 && rows > 0 {
            return Err(crate::invalid!(
                "fused program: one value per row of no columns (domain {:?})",
                p.shape
            ));
        }
        let mut strides = Vec::with_capacity(inputs.len());
        for (i, t) in inputs.iter().enumerate() {
            if t.dtype != p.dtype {
                return Err(crate::invalid!(
                    "fused program of {}: input {i} is {}",
                    p.dtype.name(),
                    t.dtype.name()
                ));
            }
            strides.push(broadcast_strides(&t.shape, &p.shape).map_err(|_| {
                crate::invalid!(
                    "fused program: input {i} of shape {:?} does not broadcast to {:?}",
                    t.shape,
                    p.shape
                )
            })?);
        }
        // Phases: a slot runs once every reduction it depends on is folded; reductions
        // are folded one per pass, in slot order.
        let mut phase = Vec::with_capacity(p.slots.len());
        let mut per_row = Vec::with_capacity(p.slots.len());
        let mut reductions = 0;
        for (i, op) in p.slots.iter().enumerate() {
            if op.code().is_none() {
                return Err(crate::invalid!(
                    "fused program: slot {i} is {op:?}, which fused kernels lack"
                ));
            }
            let operands = op.operands();
            if let Some(&bad) = operands.iter().find(|&&a| a >= i) {
                return Err(crate::invalid!(
                    "fused program: slot {i} reads slot {bad}, which is not before it"
                ));
            }
            let needs = operands
                .iter()
                .map(|&a| match p.slots[a] {
                    FusedOp::Reduce(..) => phase[a] + 1,
                    _ => phase[a],
                })
                .max()
                .unwrap_or(0);
            let row_valued = match *op {
                FusedOp::Input(k) => {
                    let s = strides.get(k).ok_or_else(|| {
                        crate::invalid!(
                            "fused program: slot {i} reads input {k} of {}",
                            inputs.len()
                        )
                    })?;
                    matches!(
                        access_of(&p.shape, p.row_axes, s),
                        Some(Access2d::Row | Access2d::Scalar)
                    )
                }
                FusedOp::Constant(_) | FusedOp::Reduce(..) => true,
                _ => operands.iter().all(|&a| per_row[a]),
            };
            if let FusedOp::Reduce(..) = op {
                if reductions == MAX_REDUCTIONS {
                    return Err(crate::invalid!(
                        "a fused program has at most {MAX_REDUCTIONS} reductions"
                    ));
                }
                if cols == 0 {
                    return Err(crate::invalid!(
                        "fused program: reduction over no columns (domain {:?})",
                        p.shape
                    ));
                }
                phase.push(reductions);
                reductions += 1;
            } else {
                phase.push(needs);
            }
            per_row.push(row_valued);
        }
        if p.per_row && !per_row[p.slots.len() - 1] {
            return Err(crate::invalid!(
                "fused program: the output is per row but depends on single columns"
            ));
        }
        Ok(Plan {
            rows,
            cols,
            reductions,
            strides,
            phase,
        })
    }

    /// The specialization constants: NSLOTS, FLAGS, then four per slot.
    fn constants(&self, p: &FusedProgram, modes: &[Access2d]) -> Vec<u32> {
        let mut flags = (self.reductions as u32) << 8;
        if p.dtype == DType::F32 && f32_via_f64() {
            flags |= 1;
            // The exact exp needs f32x_exp's table (math32x.glsl; bit 30), and its fast
            // path (exp32.glsl, where `exp_fast_path`) a table of its own (bit 5): the
            // workgroup fills them first where the program has an exp.
            let exp = |op: &FusedOp| matches!(op, FusedOp::Unary(UnaryOp::Exp, _));
            if p.slots.iter().any(exp) {
                flags |= 1 << 30;
                if super::exp_fast_path() {
                    flags |= 32;
                }
            }
        }
        if p.per_row {
            flags |= 2;
        }
        if modes
            .iter()
            .any(|m| matches!(m, Access2d::Row | Access2d::Column))
        {
            flags |= 4;
        }
        // A full input's row is read once into shared memory (fused.comp's ROW_CACHE:
        // 16 KiB) with many loads in flight; every pass reads it there. On the H200 this
        // took softmax rows of 4096 from 129 to 101 us (raw/nvidia-h200-2026-12-01a).
        let row_cache = if p.dtype == DType::F64 { 2048 } else { 4096 };
        let cached = modes
            .iter()
            .position(|m| *m == Access2d::Full)
            .filter(|_| self.reductions > 0 && self.cols <= row_cache);
        if let Some(k) = cached {
            flags |= 8 | (k as u32) << 24;
            // The first reduction folds the cached input itself (softmax's max): the fill
            // folds it as it reads the row, and phase 0 makes no pass of its own. H200,
            // softmax rows of 4096: 129-132 us against 142-178 (raw
            // nvidia-h200-2026-12-01zi, call 8).
            let first_folds_input = p.slots.iter().find_map(|op| match *op {
                FusedOp::Reduce(_, a) => Some(p.slots[a] == FusedOp::Input(k)),
                _ => None,
            });
            if first_folds_input == Some(true) {
                flags |= 64;
            }
        }
        // f32 divisions by a folded reduction (softmax's exp(x - max) / sum) multiply by
        // its reciprocal in double, computed once per row (fused.comp's
        // div_by_reciprocal: the same results). H200, softmax rows of 4096: 144 us
        // against 157 with a double division per element (raw nvidia-h200-2026-12-01zi).
        // Bit 0 (f32 math in double) is set only for f32 programs.
        let by_reciprocal = flags & 1 != 0;
        // The operand of the last reduction, when computed and read again after it is
        // folded (softmax's exp(x - max)), replaces the cached input's row in shared
        // memory where nothing later reads that input, rather than being computed again.
        let kept = cached.and_then(|k| self.operand_to_keep(p, k));
        if let Some((_, phase)) = kept {
            flags |= 16 | (phase as u32) << 28;
        }
        let mut c = vec![p.slots.len() as u32, 0];
        let mut ridx = 0u32;
        for (i, op) in p.slots.iter().enumerate() {
            let mut code = op.code().expect("checked by Plan::new") | (self.phase[i] as u32) << 8;
            let (mut arg, mut lo, mut hi) = (0u32, 0u32, 0u32);
            match *op {
                FusedOp::Input(k) => arg = (k as u32) << 16 | (modes[k] as u32) << 24,
                FusedOp::Constant(v) => {
                    if p.dtype == DType::F64 {
                        lo = v.to_bits() as u32;
                        hi = (v.to_bits() >> 32) as u32;
                    } else {
                        lo = (v as f32).to_bits();
                    }
                }
                FusedOp::Reduce(r, a) => {
                    code |= ridx << 16;
                    flags |= reduce_code(r).expect("checked by Plan::new") << (16 + 2 * ridx);
                    ridx += 1;
                    arg = a as u32;
                }
                FusedOp::Unary(_, a) => arg = a as u32,
                FusedOp::Binary(op, a, b) => {
                    arg = a as u32 | (b as u32) << 8;
                    if op == BinaryOp::Divide && by_reciprocal {
                        if let FusedOp::Reduce(..) = p.slots[b] {
                            code |= 1 << 25 | (self.phase[b] as u32) << 26;
                            flags |= 128;
                        }
                    }
                }
            }
            if kept.is_some_and(|(slot, _)| slot == i) {
                code |= 1 << 24;
            }
            c.extend([code, arg, lo, hi]);
        }
        c[1] = flags;
        c
    }

    /// The slot and phase of the last reduction's operand when it is an element-wise
    /// result that a slot of a later phase reads again, and its values can replace input
    /// `cached`'s row in shared memory: no slot of a later phase reads that input but
    /// through it, and in its own phase none after it does.
    fn operand_to_keep(&self, p: &FusedProgram, cached: usize) -> Option<(usize, usize)> {
        let (r, e) = p
            .slots
            .iter()
            .enumerate()
            .rev()
            .find_map(|(i, op)| match *op {
                FusedOp::Reduce(_, a) => Some((i, a)),
                _ => None,
            })?;
        let phase = self.phase[r];
        let computed = matches!(p.slots[e], FusedOp::Unary(..) | FusedOp::Binary(..));
        let read_later = p.slots.iter().enumerate().any(|(j, op)| {
            !matches!(op, FusedOp::Reduce(..))
                && self.phase[j] > phase
                && op.operands().contains(&e)
        });
        if !computed || !read_later {
            return None;
        }
        let reads_input = |i: usize| p.slots[i] == FusedOp::Input(cached);
        for q in phase..=self.reductions {
            let live = self.live_in_phase(p, q, (q > phase).then_some(e));
            let clash =
                (0..p.slots.len()).any(|i| live[i] && reads_input(i) && (q > phase || i > e));
            if clash {
                return None;
            }
        }
        Some((e, phase))
    }

    /// The slots whose values phase `q` uses: the output's operands in the last phase,
    /// the operands of the reduction folded in `q` before it. Reductions already folded
    /// and `leaf` (a slot read from shared memory) need nothing further.
    fn live_in_phase(&self, p: &FusedProgram, q: usize, leaf: Option<usize>) -> Vec<bool> {
        let n = p.slots.len();
        let mut live = vec![false; n];
        let mut stack: Vec<usize> = if q == self.reductions {
            vec![n - 1]
        } else {
            p.slots
                .iter()
                .enumerate()
                .filter(|&(i, op)| matches!(op, FusedOp::Reduce(..)) && self.phase[i] == q)
                .flat_map(|(_, op)| op.operands())
                .collect()
        };
        while let Some(i) = stack.pop() {
            if live[i] {
                continue;
            }
            live[i] = true;
            let folded = matches!(p.slots[i], FusedOp::Reduce(..)) && self.phase[i] < q;
            if !folded && leaf != Some(i) {
                stack.extend(p.slots[i].operands());
            }
        }
        live
    }
}
