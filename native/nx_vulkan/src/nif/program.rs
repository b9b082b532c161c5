//! Recording and replaying compiled calls (`Nx.Vulkan.Compiler`; see [`crate::program`]).
//!
//! `p_capture_begin(inputs)` starts a recording for the calling process: from then on
//! every tensor op that process makes through [`op`] runs as usual and is also appended
//! to its recording, with each tensor operand named by where it came from (an input, an
//! earlier op, or a tensor that existed before, which the program then holds).
//! `p_capture_end(outputs)` turns the recording into a program, unless the process read a
//! tensor back on the way (a `while` predicate, a host fallback, a bounds check): then the
//! answer is `{:error, {:not_recordable, why}}` and the caller keeps the op-by-op path.
//! `p_run(program, inputs)` runs a program in one native call.

use super::convert::{err, wrap, NifOut};
use super::tensor::{get_unrecorded, new_ref, Ref};
use super::twin::{attempt, Attempt};
use crate::error::{Error, Result};
use crate::program::{Instr, OpFn, Operand, Program};
use crate::tensor::Tensor;
use rustler::{Env, LocalPid, ResourceArc};
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};

/// A recorded program held by the BEAM.
pub struct ProgramRes(Program);

// A program is never changed after it is made, so a panic inside a call (caught at the
// NIF boundary) cannot leave it half-updated; vulkano's types inside do not declare it.
impl std::panic::RefUnwindSafe for ProgramRes {}
impl std::panic::UnwindSafe for ProgramRes {}

#[rustler::resource_impl]
impl rustler::Resource for ProgramRes {}

/// One process's recording in progress.
struct Recording {
    inputs: usize,
    /// The slot of each tensor the recording has seen, by its reference's address (the
    /// references are kept in `seen`, so an address is not reused meanwhile).
    slot_of: HashMap<usize, usize>,
    seen: Vec<Ref>,
    instrs: Vec<Instr>,
    /// The slots so far: the inputs and every recorded result.
    slots: usize,
    /// Why it cannot become a program, once known.
    broken: Option<String>,
}

/// Recordings by process; `ACTIVE` counts them so that ops skip the lookup when none is.
fn recordings() -> &'static Mutex<HashMap<LocalPid, Recording>> {
    static R: OnceLock<Mutex<HashMap<LocalPid, Recording>>> = OnceLock::new();
    R.get_or_init(Mutex::default)
}
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

/// Completed native tensor calls (ops and program runs; an attempt that moved to a
/// dirty scheduler counts once) and program runs, for `Nx.Vulkan.stats/0`.
static NATIVE_CALLS: AtomicU64 = AtomicU64::new(0);
static PROGRAM_RUNS: AtomicU64 = AtomicU64::new(0);

/// The native-call and program-run counters.
pub fn counts() -> (u64, u64) {
    (
        NATIVE_CALLS.load(Ordering::Relaxed),
        PROGRAM_RUNS.load(Ordering::Relaxed),
    )
}

thread_local! {
    /// The process the current NIF call runs for, while any recording is active.
    static CALLER: Cell<Option<LocalPid>> = const { Cell::new(None) };
}

/// Notes the calling process at the start of a NIF call (see [`op`]).
pub fn enter(env: Env<'_>) {
    let who = (ACTIVE.load(Ordering::Acquire) > 0).then(|| env.pid());
    CALLER.with(|c| c.set(who));
}

/// Runs `f` with the recording of the calling process, if it has one.
fn with_recording<T>(f: impl FnOnce(&mut Recording) -> T) -> Option<T> {
    let pid = CALLER.with(|c| c.get())?;
    let mut all = recordings().lock().unwrap_or_else(|e| e.into_inner());
    all.get_mut(&pid).map(f)
}

fn key(r: &Ref) -> usize {
    &**r as *const _ as usize
}

/// Marks the calling process's recording as unusable: `op` did `what` (a read of a
/// tensor's data, or a call that cannot be replayed). Costs nothing when no recording is
/// active (the reason is only formatted for one).
pub fn spoil(op: &str, what: &str) {
    with_recording(|rec| {
        rec.broken.get_or_insert_with(|| format!("{op} {what}"));
    });
}

/// Runs one tensor op: `f` on the tensors behind `refs`, giving a new reference; when the
/// caller is recording, the op is recorded too.
pub fn op(
    name: &str,
    refs: &[&Ref],
    f: impl Fn(&[Tensor]) -> Result<Tensor> + Send + Sync + 'static,
) -> NifOut<Ref> {
    let mut outs = ops(name, refs, crate::program::one(f))?;
    Ok(outs.remove(0))
}

/// Runs one tensor op with several results (a generated kernel's outputs): `f` on the
/// tensors behind `refs`, giving a new reference per result; recorded as [`op`] records.
pub fn ops(name: &str, refs: &[&Ref], f: OpFn) -> NifOut<Vec<Ref>> {
    let inputs = refs
        .iter()
        .map(|r| get_unrecorded(name, r))
        .collect::<NifOut<Vec<Tensor>>>()?;
    let outs: Vec<Ref> = wrap(name, f(&inputs))?.into_iter().map(new_ref).collect();
    NATIVE_CALLS.fetch_add(1, Ordering::Relaxed);
    with_recording(|rec| {
        let operands = refs
            .iter()
            .zip(&inputs)
            .map(|(r, t)| match rec.slot_of.get(&key(r)) {
                Some(&s) => Operand::Slot(s),
                None => Operand::Pinned(t.clone()),
            })
            .collect();
        let slot = rec.slots;
        rec.slots += outs.len();
        rec.instrs.push(Instr {
            name: name.to_string(),
            run: f,
            operands,
            out: slot,
            results: outs.len(),
        });
        for (k, out) in outs.iter().enumerate() {
            rec.slot_of.insert(key(out), slot + k);
            rec.seen.push(out.clone());
        }
    });
    Ok(outs)
}

/// Starts recording the calling process's ops for a program of `inputs` inputs, each
/// named by [`p_capture_input`] when the caller first evaluates it.
#[rustler::nif]
fn p_capture_begin(env: Env<'_>, inputs: usize) -> NifOut<rustler::Atom> {
    let rec = Recording {
        inputs,
        slot_of: HashMap::new(),
        seen: Vec::new(),
        instrs: Vec::new(),
        slots: inputs,
        broken: None,
    };
    let mut all = recordings().lock().unwrap_or_else(|e| e.into_inner());
    // Recordings of processes that died before ending them (killed mid-call).
    let before = all.len();
    all.retain(|pid, _| env.is_process_alive(*pid));
    ACTIVE.fetch_sub(before - all.len(), Ordering::AcqRel);
    if all.insert(env.pid(), rec).is_none() {
        ACTIVE.fetch_add(1, Ordering::AcqRel);
    }
    Ok(super::ok())
}

/// Names the tensor behind `r` as input `index` of the calling process's recording.
#[rustler::nif]
fn p_capture_input(env: Env<'_>, index: usize, r: Ref) -> rustler::Atom {
    let mut all = recordings().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rec) = all.get_mut(&env.pid()) {
        if index >= rec.inputs {
            rec.broken = Some(format!("input {index} of {}", rec.inputs));
        } else if rec.slot_of.insert(key(&r), index).is_some() {
            // One tensor as two inputs: a replay with two tensors could not tell them.
            rec.broken = Some("one tensor is passed as two arguments".into());
        }
        rec.seen.push(r);
    }
    super::ok()
}

/// Ends the calling process's recording; `outputs` are its results. `{:ok, program}`, or
/// `{:error, {:not_recordable, why}}`.
#[rustler::nif]
fn p_capture_end(env: Env<'_>, outputs: Vec<Ref>) -> NifOut<ResourceArc<ProgramRes>> {
    let rec = {
        let mut all = recordings().lock().unwrap_or_else(|e| e.into_inner());
        all.remove(&env.pid())
    };
    let Some(rec) = rec else {
        return Err(err(
            "capture",
            Error::InvalidArgument("no recording in progress".into()),
        ));
    };
    ACTIVE.fetch_sub(1, Ordering::AcqRel);
    if let Some(why) = rec.broken {
        return Err((super::convert::not_recordable(), why));
    }
    let outputs = outputs
        .iter()
        .map(|r| match rec.slot_of.get(&key(r)) {
            Some(&s) => Ok(Operand::Slot(s)),
            None => get_unrecorded("capture", r).map(Operand::Pinned),
        })
        .collect::<NifOut<Vec<_>>>()?;
    let program = wrap("capture", Program::new(rec.inputs, rec.instrs, outputs))?;
    Ok(ResourceArc::new(ProgramRes(program)))
}

/// Drops the calling process's recording, if any (after an exception).
#[rustler::nif]
fn p_capture_abort(env: Env<'_>) -> rustler::Atom {
    let mut all = recordings().lock().unwrap_or_else(|e| e.into_inner());
    if all.remove(&env.pid()).is_some() {
        ACTIVE.fetch_sub(1, Ordering::AcqRel);
    }
    super::ok()
}

/// How many inputs and ops a program has.
#[rustler::nif]
fn p_info(program: ResourceArc<ProgramRes>) -> (usize, usize) {
    (program.0.inputs(), program.0.len())
}

fn run(env: Env<'_>, program: &ProgramRes, inputs: &[Option<Ref>]) -> NifOut<Vec<Ref>> {
    enter(env);
    spoil("p_run", "runs a recorded program inside a recording");
    let tensors = inputs
        .iter()
        .map(|r| r.as_ref().map(|r| get_unrecorded("program", r)).transpose())
        .collect::<NifOut<Vec<Option<Tensor>>>>()?;
    let outs = wrap("program", program.0.run(tensors))?;
    NATIVE_CALLS.fetch_add(1, Ordering::Relaxed);
    PROGRAM_RUNS.fetch_add(1, Ordering::Relaxed);
    Ok(outs.into_iter().map(new_ref).collect())
}

/// `p_run` on the normal scheduler, or `:would_block` (see [`super::twin`]). A replay
/// cut short by `:would_block` runs again whole on the dirty scheduler: its ops have no
/// effect but their results.
#[rustler::nif]
fn p_run_nb(
    env: Env<'_>,
    program: ResourceArc<ProgramRes>,
    inputs: Vec<Option<Ref>>,
) -> Attempt<Vec<Ref>> {
    attempt(|| run(env, &program, &inputs))
}

/// `p_run` on a dirty scheduler.
#[rustler::nif(schedule = "DirtyCpu")]
fn p_run_dirty(
    env: Env<'_>,
    program: ResourceArc<ProgramRes>,
    inputs: Vec<Option<Ref>>,
) -> NifOut<Vec<Ref>> {
    super::twin::note_dirty();
    run(env, &program, &inputs)
}
