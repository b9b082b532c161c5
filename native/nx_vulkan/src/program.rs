//! A recorded program: the ops one compiled call made, replayed on new inputs.
//!
//! `Nx.Vulkan.Compiler` runs a function once through the backend while the NIF boundary
//! records each op it calls ([`Instr`]: the op with its non-tensor arguments bound, and
//! where its tensor operands come from). Later calls with the same shapes and types run
//! the list in one native call: the same `ops::*` code on new tensors, so results are
//! bit-identical to the op-by-op run. Intermediate tensors are dropped after their last
//! use, returning their buffers to the pool within the call.
//!
//! The first run also captures the launches the ops make (a [`LaunchList`]); later runs
//! on inputs of the same signature replay those instead of re-deciding each op.
//! `NX_VULKAN_LAUNCH_LISTS=0` turns that off.

use crate::error::{Error, Result};
use crate::launch_list::{self, LaunchList};
use crate::tensor::Tensor;
use std::sync::{Arc, OnceLock};

/// Whether programs capture and replay launch lists (`NX_VULKAN_LAUNCH_LISTS=0`: no).
fn launch_lists() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| std::env::var("NX_VULKAN_LAUNCH_LISTS").map_or(true, |v| v != "0"))
}

/// An op with its non-tensor arguments bound: operand tensors in, its results out (one
/// for most ops; a generated kernel may store several).
pub type OpFn = Arc<dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync>;

/// An [`OpFn`] of an op with one result.
pub fn one(f: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static) -> OpFn {
    Arc::new(move |x| f(x).map(|t| vec![t]))
}

/// Where an operand comes from.
#[derive(Clone)]
pub enum Operand {
    /// A program input (`0..inputs`) or an earlier instruction's result.
    Slot(usize),
    /// A tensor that existed before the recording and is none of its inputs (a
    /// constant the compiler uploaded once): the program holds it.
    Pinned(Tensor),
}

/// One recorded op.
pub struct Instr {
    /// The op's Nx name (for inspection).
    pub name: String,
    pub run: OpFn,
    pub operands: Vec<Operand>,
    /// The slot its first result goes to; the others follow.
    pub out: usize,
    /// How many results it makes.
    pub results: usize,
}

/// A list of ops over slots: inputs first, then one slot per result of each instruction.
pub struct Program {
    inputs: usize,
    instrs: Vec<Instr>,
    outputs: Vec<Operand>,
    slots: usize,
    /// For each slot, the index of the last instruction that reads it (`None`: no
    /// instruction does, or an output holds it to the end).
    last_use: Vec<Option<usize>>,
    /// The launches of the first run that finished (`None` inside: not replayable).
    list: OnceLock<Option<LaunchList>>,
}

impl Program {
    /// A program of `inputs` inputs, `instrs` in order and `outputs`. Every slot an
    /// instruction or output reads must be an input or an earlier instruction's result.
    pub fn new(inputs: usize, instrs: Vec<Instr>, outputs: Vec<Operand>) -> Result<Program> {
        let slots = inputs + instrs.iter().map(|i| i.results).sum::<usize>();
        let unwritten = |s: usize| {
            Error::InvalidArgument(format!("program: slot {s} is read before it is written"))
        };
        let mut last_use = vec![None; slots];
        let mut next = inputs;
        for (i, instr) in instrs.iter().enumerate() {
            if instr.out != next || instr.results == 0 {
                return Err(Error::InvalidArgument(format!(
                    "program: instruction {i} writes {} slots from {}, not from {next}",
                    instr.results, instr.out
                )));
            }
            next += instr.results;
            for o in &instr.operands {
                if let Operand::Slot(s) = *o {
                    if s >= instr.out {
                        return Err(unwritten(s));
                    }
                    last_use[s] = Some(i);
                }
            }
        }
        let mut held = vec![false; slots];
        for o in &outputs {
            if let Operand::Slot(s) = *o {
                if s >= slots {
                    return Err(unwritten(s));
                }
                held[s] = true;
                last_use[s] = None;
            }
        }
        // A result nothing reads goes as soon as it is made.
        for (i, instr) in instrs.iter().enumerate() {
            for s in instr.out..instr.out + instr.results {
                if last_use[s].is_none() && !held[s] {
                    last_use[s] = Some(i);
                }
            }
        }
        Ok(Program {
            inputs,
            instrs,
            outputs,
            slots,
            last_use,
            list: OnceLock::new(),
        })
    }

    /// How many inputs it takes.
    pub fn inputs(&self) -> usize {
        self.inputs
    }

    /// How many ops it runs.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// Whether it runs no op (its outputs are inputs or held tensors).
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// The launch list its first run captured, if it has one.
    pub fn launch_list(&self) -> Option<&LaunchList> {
        self.list.get().and_then(Option::as_ref)
    }

    /// Runs the program on `inputs` (`None` for an input no op reads: a function's unused
    /// argument); returns the outputs. Replays the launch list where the inputs fit it;
    /// the first run captures it.
    pub fn run(&self, inputs: Vec<Option<Tensor>>) -> Result<Vec<Tensor>> {
        if inputs.len() != self.inputs {
            return Err(Error::InvalidArgument(format!(
                "program: {} inputs given, it takes {}",
                inputs.len(),
                self.inputs
            )));
        }
        if !launch_lists() {
            return self.run_ops(inputs);
        }
        match self.list.get() {
            Some(Some(list)) if list.fits(&inputs) => list.replay(&inputs),
            Some(_) => self.run_ops(inputs),
            None if self.holds_an_input(&inputs) => {
                // A constant the program holds is also an argument: a list could not tell
                // the two apart on later calls.
                let _ = self.list.set(None);
                self.run_ops(inputs)
            }
            None => {
                let kept = inputs.clone();
                let (outs, commands) = launch_list::capture(|| self.run_ops(inputs));
                match outs {
                    Ok(outs) => {
                        let list = commands.and_then(|c| LaunchList::new(&kept, c, &outs));
                        let _ = self.list.set(list);
                        Ok(outs)
                    }
                    // The capture keeps every intermediate until the run ends: where that
                    // is more memory than there is, the program runs op by op (freeing
                    // each intermediate after its last use), without a list.
                    Err(Error::OutOfMemory(_)) => {
                        drop(commands);
                        let _ = self.list.set(None);
                        self.run_ops(kept)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }

    /// Whether a tensor the program holds (a pinned operand or output) shares a buffer
    /// with one of `inputs`.
    fn holds_an_input(&self, inputs: &[Option<Tensor>]) -> bool {
        let held = self
            .instrs
            .iter()
            .flat_map(|i| i.operands.iter())
            .chain(self.outputs.iter())
            .filter_map(|o| match o {
                Operand::Pinned(t) => Some(&t.block),
                Operand::Slot(_) => None,
            });
        held.into_iter()
            .any(|b| inputs.iter().flatten().any(|t| Arc::ptr_eq(&t.block, b)))
    }

    /// Runs the ops one by one.
    fn run_ops(&self, inputs: Vec<Option<Tensor>>) -> Result<Vec<Tensor>> {
        let mut slots: Vec<Option<Tensor>> = Vec::with_capacity(self.slots);
        slots.extend(inputs);
        slots.resize(self.slots, None);
        for (i, instr) in self.instrs.iter().enumerate() {
            let operands = instr
                .operands
                .iter()
                .map(|o| match o {
                    Operand::Slot(s) => slots[*s].clone().ok_or_else(|| {
                        Error::InvalidArgument(format!("program: slot {s} is empty"))
                    }),
                    Operand::Pinned(t) => Ok(t.clone()),
                })
                .collect::<Result<Vec<Tensor>>>()?;
            let results = (instr.run)(&operands)?;
            if results.len() != instr.results {
                return Err(Error::InvalidArgument(format!(
                    "program: {} made {} results, not {}",
                    instr.name,
                    results.len(),
                    instr.results
                )));
            }
            for (k, t) in results.into_iter().enumerate() {
                slots[instr.out + k] = Some(t);
            }
            // Drop what no later instruction or output reads (inputs stay the caller's).
            let done = instr.operands.iter().filter_map(|o| match o {
                Operand::Slot(s) if *s >= self.inputs => Some(*s),
                _ => None,
            });
            for s in done.chain(instr.out..instr.out + instr.results) {
                if self.last_use[s] == Some(i) {
                    slots[s] = None;
                }
            }
        }
        self.outputs
            .iter()
            .map(|o| match o {
                Operand::Slot(s) => slots[*s]
                    .clone()
                    .ok_or_else(|| Error::InvalidArgument(format!("program: slot {s} is empty"))),
                Operand::Pinned(t) => Ok(t.clone()),
            })
            .collect()
    }
}
