//! Launch lists: a program's launches, captured on one run and replayed on new buffers.
//!
//! A [`crate::program::Program`] run re-decides every op: kernel lookup, output shapes,
//! push constants, a new tensor per result. Those decisions depend only on the inputs'
//! shapes, types and known value magnitudes, so the first run of a program captures
//! what reached the stream ([`capture`]): each dispatch with its pipeline, push words
//! (which of them are buffer addresses: `PushWords::addr`), grid and accesses, and each
//! in-stream update with its bytes. Later runs with inputs of the same signature replay
//! the list ([`LaunchList::replay`]): one new buffer per intermediate and output (from
//! the pool, allocated before anything is recorded), the addresses patched into the push
//! words, and the commands recorded through the same stream, whose hazard tracking
//! places the barriers, in dependency-level order (`by_level`: a barrier only where a
//! level begins). The commands are the same and every dependency keeps its order, so the
//! results are bit-identical to the program's ops.
//!
//! A list small enough is recorded once into a command buffer that every later replay
//! executes (`launch_list_recorded.rs`): no launch is recorded again.
//!
//! Each captured block is an input, a block the list writes before reading it (a new
//! one per replay), or a block it only reads (a constant the program holds, or a table
//! an op wrote from the host): that one is kept and shared by every replay. A capture
//! that writes a kept block or an input, binds descriptor sets, copies buffers, or sees
//! two inputs share one buffer gives no list: the program keeps running op by op.

use crate::engine::engine;
use crate::error::Result;
use crate::exec::Access;
use crate::kernels::Push;
use crate::memory::{Block, Kind, Use};
use crate::tensor::Tensor;
use crate::DType;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use vulkano::pipeline::{ComputePipeline, Pipeline};

/// One captured command, its blocks as they were on the capturing run.
enum Captured {
    Dispatch {
        pipeline: Arc<ComputePipeline>,
        push: Push,
        addr_words: u32,
        groups: [u32; 3],
        accesses: Vec<(Arc<Block>, bool)>,
    },
    Update {
        block: Arc<Block>,
        data: Vec<u8>,
    },
    /// The host wrote the block (outside the stream): a replay keeps the capture's.
    HostWrite(Arc<Block>),
}

#[derive(Default)]
struct Capture {
    commands: Vec<Captured>,
    spoiled: Option<&'static str>,
}

thread_local! {
    /// The capture in progress on this thread (a NIF call runs on one thread).
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// Runs `f`, capturing the commands it records on this thread; `None` for the capture
/// when something in it cannot be replayed (see [`spoil`]).
pub(crate) fn capture<T>(f: impl FnOnce() -> T) -> (T, Option<Vec<CapturedCommand>>) {
    /// Ends the capture however `f` ends (a panic is caught at the NIF boundary, and the
    /// thread goes on to other calls).
    struct End;
    impl Drop for End {
        fn drop(&mut self) {
            CAPTURE.with(|c| c.borrow_mut().take());
        }
    }
    CAPTURE.with(|c| *c.borrow_mut() = Some(Capture::default()));
    let end = End;
    let out = f();
    let cap = CAPTURE.with(|c| c.borrow_mut().take()).unwrap_or_default();
    drop(end);
    let commands = cap
        .spoiled
        .is_none()
        .then(|| cap.commands.into_iter().map(CapturedCommand).collect());
    (out, commands)
}

/// A captured command (opaque outside this module).
pub(crate) struct CapturedCommand(Captured);

fn capturing(f: impl FnOnce(&mut Capture)) {
    CAPTURE.with(|c| {
        if let Some(cap) = c.borrow_mut().as_mut() {
            f(cap)
        }
    });
}

/// Notes a dispatch for the capture in progress on this thread, if any.
pub(crate) fn note_dispatch(
    pipeline: &Arc<ComputePipeline>,
    push: &Push,
    addr_words: u32,
    groups: [u32; 3],
    accesses: &[Access<'_>],
) {
    capturing(|cap| {
        let accesses = accesses
            .iter()
            .map(|a| match a {
                Access::Read(b) => ((*b).clone(), false),
                Access::Write(b) => ((*b).clone(), true),
            })
            .collect();
        cap.commands.push(Captured::Dispatch {
            pipeline: pipeline.clone(),
            push: *push,
            addr_words,
            groups,
            accesses,
        });
    });
}

/// Notes an in-stream update for the capture in progress on this thread, if any.
pub(crate) fn note_update(block: &Arc<Block>, data: &[u8]) {
    capturing(|cap| {
        cap.commands.push(Captured::Update {
            block: block.clone(),
            data: data.to_vec(),
        })
    });
}

/// Runs `write`, a write of `block` from the host (directly or through a staging copy),
/// outside the capture in progress on this thread, if any, which notes `block` as
/// host-written: a replay keeps the capture's block and its contents.
pub(crate) fn host_write<T>(block: &Arc<Block>, write: impl FnOnce() -> T) -> T {
    let cap = CAPTURE.with(|c| c.borrow_mut().take());
    let out = write();
    if let Some(mut cap) = cap {
        cap.commands.push(Captured::HostWrite(block.clone()));
        CAPTURE.with(|c| *c.borrow_mut() = Some(cap));
    }
    out
}

/// Marks the capture in progress on this thread, if any, as not replayable.
pub(crate) fn spoil(why: &'static str) {
    capturing(|cap| {
        cap.spoiled.get_or_insert(why);
    });
}

/// Where a replay takes a block from.
#[derive(Clone)]
enum Source {
    /// The buffer of input `i`.
    Input(usize),
    /// A new buffer of this kind and size class, `i`-th of the replay's.
    Fresh(usize),
    /// The capture's own buffer, only read.
    Kept(Arc<Block>),
}

enum Command {
    Dispatch {
        pipeline: Arc<ComputePipeline>,
        push: Push,
        addr_words: u32,
        /// (word index, block, byte offset) of each address in `push`.
        patches: Vec<(usize, usize, u64)>,
        groups: [u32; 3],
        /// (block, written) per access.
        accesses: Vec<(usize, bool)>,
    },
    Update {
        block: usize,
        data: Vec<u8>,
    },
}

impl Command {
    /// The blocks it touches, each with whether it writes it.
    fn accesses(&self) -> impl Iterator<Item = (usize, bool)> + '_ {
        let (dispatch, update) = match self {
            Command::Dispatch { accesses, .. } => (accesses.as_slice(), None),
            Command::Update { block, .. } => (&[][..], Some((*block, true))),
        };
        dispatch.iter().copied().chain(update)
    }
}

/// The signature of an input a list was captured with.
#[derive(PartialEq, Eq)]
struct InputSig {
    shape: Vec<usize>,
    dtype: DType,
    value_bits: Option<u32>,
}

impl InputSig {
    fn of(t: &Tensor) -> InputSig {
        InputSig {
            shape: t.shape.clone(),
            dtype: t.dtype,
            value_bits: t.value_bits,
        }
    }
}

/// An output: where its buffer comes from and what it holds.
struct Output {
    block: usize,
    shape: Vec<usize>,
    dtype: DType,
    value_bits: Option<u32>,
}

/// A program's launches, ready to replay on inputs of the signature they were captured
/// with.
pub struct LaunchList {
    inputs: Vec<Option<InputSig>>,
    blocks: Vec<Source>,
    /// The buffers a replay allocates, and for each fresh block the one it takes.
    buffers: Vec<(Kind, u64)>,
    fresh: Vec<usize>,
    commands: Vec<Command>,
    /// Each command's dependency level (`by_level`), ascending.
    levels: Vec<usize>,
    outputs: Vec<Output>,
    /// The list recorded once into a command buffer, where it is small enough
    /// (`recorded`); `None` inside: replayed command by command.
    recorded: std::sync::OnceLock<Option<recorded::Recorded>>,
}

/// Fresh blocks of at least this size class share a buffer within a replay once the
/// earlier one's last command has been recorded, as the op-by-op run's pool reuses large
/// buffers within a batch (the stream's hazard tracking orders the new writes after the
/// old reads); smaller ones each get a buffer, so that no barrier is added for them.
const SHARED_BUFFER_BYTES: u64 = 16 << 20;

/// The buffers a replay allocates for `fresh` blocks (kind, size class), and the one each
/// fresh block takes: large blocks whose commands do not overlap share one.
fn share_large_buffers(
    blocks: &[Source],
    fresh: &[(Kind, u64)],
    commands: &[Command],
    outputs: &[Output],
) -> (Vec<(Kind, u64)>, Vec<usize>) {
    // First and last command of each fresh block (outputs live past the end).
    let mut span = vec![(usize::MAX, 0usize); fresh.len()];
    let mut touch = |block: usize, at: usize| {
        if let Source::Fresh(f) = blocks[block] {
            span[f].0 = span[f].0.min(at);
            span[f].1 = span[f].1.max(at);
        }
    };
    for (at, c) in commands.iter().enumerate() {
        c.accesses().for_each(|(b, _)| touch(b, at));
    }
    outputs.iter().for_each(|o| touch(o.block, usize::MAX));
    let mut order: Vec<usize> = (0..fresh.len()).collect();
    order.sort_by_key(|&f| span[f].0);
    let mut buffers: Vec<(Kind, u64)> = Vec::new();
    // Per buffer, the last command of the block that holds it.
    let mut busy_until: Vec<usize> = Vec::new();
    let mut taken = vec![0; fresh.len()];
    for f in order {
        let (kind, bytes) = fresh[f];
        let reuse = (bytes >= SHARED_BUFFER_BYTES)
            .then(|| {
                (0..buffers.len())
                    .find(|&b| buffers[b] == (kind, bytes) && busy_until[b] < span[f].0)
            })
            .flatten();
        let b = reuse.unwrap_or_else(|| {
            buffers.push((kind, bytes));
            busy_until.push(0);
            buffers.len() - 1
        });
        busy_until[b] = span[f].1;
        taken[f] = b;
    }
    (buffers, taken)
}

/// `commands` in dependency-level order, stably: a command's level is one more than that
/// of the latest command it must follow (it reads what that one writes, or writes what
/// that one reads or writes; blocks sharing a buffer count as one). Commands of one level
/// are independent, so the stream's hazard tracking puts a barrier only where a level
/// begins, where the program's order may interleave independent chains and need one
/// between every pair.
fn by_level(
    blocks: &[Source],
    fresh: &[usize],
    commands: Vec<Command>,
) -> (Vec<Command>, Vec<usize>) {
    let buffers = fresh.iter().map(|&b| b + 1).max().unwrap_or(0);
    let resource = |b: usize| match blocks[b] {
        Source::Fresh(f) => fresh[f],
        _ => buffers + b,
    };
    let mut written: HashMap<usize, usize> = HashMap::new();
    let mut read: HashMap<usize, usize> = HashMap::new();
    let mut levels = Vec::with_capacity(commands.len());
    for c in &commands {
        let mut level = 0;
        for (b, w) in c.accesses() {
            let r = resource(b);
            if let Some(&l) = written.get(&r) {
                level = level.max(l + 1);
            }
            if let (true, Some(&l)) = (w, read.get(&r)) {
                level = level.max(l + 1);
            }
        }
        for (b, w) in c.accesses() {
            let r = resource(b);
            if w {
                written.insert(r, level);
            } else {
                let l = read.entry(r).or_insert(level);
                *l = (*l).max(level);
            }
        }
        levels.push(level);
    }
    let mut order: Vec<(usize, Command)> = levels.into_iter().zip(commands).collect();
    order.sort_by_key(|(level, _)| *level);
    order.into_iter().map(|(l, c)| (c, l)).unzip()
}

#[path = "launch_list_recorded.rs"]
mod recorded;
pub use recorded::recorded_runs;

/// `push` with each patched address word pointing into its block's buffer in `blocks`.
fn patched(push: &Push, patches: &[(usize, usize, u64)], blocks: &[&Arc<Block>]) -> Push {
    let mut words = *push;
    for &(w, b, offset) in patches {
        let a = blocks[b].addr + offset;
        words[w] = a as u32;
        words[w + 1] = (a >> 32) as u32;
    }
    words
}

/// Launch-list replays since start (for `Nx.Vulkan.stats/0` and tests).
static REPLAYS: AtomicU64 = AtomicU64::new(0);

/// How many program runs replayed a launch list.
pub fn replays() -> u64 {
    REPLAYS.load(Ordering::Relaxed)
}

impl LaunchList {
    /// The list of `commands` captured while a program ran on `inputs` and gave
    /// `outputs`; `None` where a replay could not reproduce that run.
    pub(crate) fn new(
        inputs: &[Option<Tensor>],
        commands: Vec<CapturedCommand>,
        outputs: &[Tensor],
    ) -> Option<LaunchList> {
        let key = |b: &Arc<Block>| Arc::as_ptr(b) as usize;
        let mut index: HashMap<usize, usize> = HashMap::new();
        let mut blocks: Vec<Source> = Vec::new();
        let mut fresh = Vec::new();
        for (i, t) in inputs.iter().enumerate() {
            if let Some(t) = t {
                // Two inputs on one buffer (a tensor and its reshape) may come apart later.
                if index.insert(key(&t.block), blocks.len()).is_some() {
                    return None;
                }
                blocks.push(Source::Input(i));
            }
        }
        let mut slot_of = |b: &Arc<Block>, written: bool| -> Option<usize> {
            if let Some(&s) = index.get(&key(b)) {
                // Inputs and kept blocks are shared: a replay must not write them.
                let shared = !matches!(blocks[s], Source::Fresh(_));
                return (!(written && shared)).then_some(s);
            }
            let s = blocks.len();
            if written {
                blocks.push(Source::Fresh(fresh.len()));
                fresh.push((b.kind, b.capacity));
            } else {
                blocks.push(Source::Kept(b.clone()));
            }
            index.insert(key(b), s);
            Some(s)
        };
        let mut list = Vec::with_capacity(commands.len());
        for CapturedCommand(c) in commands {
            match c {
                Captured::Dispatch {
                    pipeline,
                    push,
                    addr_words,
                    groups,
                    accesses,
                } => {
                    // A block read and written by one launch is read first.
                    let mut slots = Vec::with_capacity(accesses.len());
                    for (b, _) in accesses.iter().filter(|(_, w)| !*w) {
                        slots.push((slot_of(b, false)?, false, b.clone()));
                    }
                    for (b, _) in accesses.iter().filter(|(_, w)| *w) {
                        slots.push((slot_of(b, true)?, true, b.clone()));
                    }
                    let mut patches = Vec::new();
                    for w in (0..push.len() - 1).filter(|w| addr_words & (1 << w) != 0) {
                        let addr = push[w] as u64 | (push[w + 1] as u64) << 32;
                        let (slot, _, b) = slots
                            .iter()
                            .find(|(_, _, b)| (b.addr..b.addr + b.capacity).contains(&addr))?;
                        patches.push((w, *slot, addr - b.addr));
                    }
                    list.push(Command::Dispatch {
                        pipeline,
                        push,
                        addr_words,
                        patches,
                        groups,
                        accesses: slots.iter().map(|(s, w, _)| (*s, *w)).collect(),
                    });
                }
                Captured::Update { block, data } => {
                    let s = slot_of(&block, true)?;
                    list.push(Command::Update { block: s, data });
                }
                Captured::HostWrite(block) => {
                    slot_of(&block, false)?;
                }
            }
        }
        let outputs: Vec<Output> = outputs
            .iter()
            .map(|t| {
                let s = match index.get(&key(&t.block)) {
                    Some(&s) => s,
                    // An output no command touched: a tensor the program holds.
                    None => {
                        blocks.push(Source::Kept(t.block.clone()));
                        blocks.len() - 1
                    }
                };
                Output {
                    block: s,
                    shape: t.shape.clone(),
                    dtype: t.dtype,
                    value_bits: t.value_bits,
                }
            })
            .collect();
        let (buffers, fresh) = share_large_buffers(&blocks, &fresh, &list, &outputs);
        let (list, levels) = by_level(&blocks, &fresh, list);
        Some(LaunchList {
            inputs: inputs
                .iter()
                .map(|t| t.as_ref().map(InputSig::of))
                .collect(),
            blocks,
            buffers,
            fresh,
            commands: list,
            levels,
            outputs,
            recorded: std::sync::OnceLock::new(),
        })
    }

    /// Whether `inputs` have the signature the list was captured with (otherwise the
    /// program runs op by op).
    pub fn fits(&self, inputs: &[Option<Tensor>]) -> bool {
        inputs.len() == self.inputs.len()
            && inputs
                .iter()
                .zip(&self.inputs)
                .all(|(t, sig)| match (t, sig) {
                    (Some(t), Some(sig)) => InputSig::of(t) == *sig,
                    (None, None) => true,
                    _ => false,
                })
    }

    /// How many buffers a replay allocates (large intermediates share them).
    pub fn buffers(&self) -> usize {
        self.buffers.len()
    }

    /// How many commands it records.
    pub fn len(&self) -> usize {
        self.commands.len()
    }

    /// Whether it records nothing.
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// One new buffer per entry of `buffers` (what the fresh blocks take).
    fn alloc_buffers(&self) -> Result<Vec<Arc<Block>>> {
        let e = engine()?;
        self.buffers
            .iter()
            .map(|&(kind, bytes)| e.memory.alloc(kind, bytes, Use::Device))
            .collect()
    }

    /// The buffer each of the list's blocks is on: input `i`'s is `input(i)`, fresh
    /// blocks take theirs from `buffers` (from [`LaunchList::alloc_buffers`]).
    fn blocks_on<'a>(
        &'a self,
        buffers: &'a [Arc<Block>],
        input: impl Fn(usize) -> &'a Arc<Block>,
    ) -> Vec<&'a Arc<Block>> {
        self.blocks
            .iter()
            .map(|s| match s {
                Source::Input(i) => input(*i),
                Source::Fresh(f) => &buffers[self.fresh[*f]],
                Source::Kept(b) => b,
            })
            .collect()
    }

    /// Records the list on `inputs` (which [`LaunchList::fits`]); returns the outputs.
    pub fn replay(&self, inputs: &[Option<Tensor>]) -> Result<Vec<Tensor>> {
        if let Some(rec) = self.recorded(inputs)? {
            return self.run_recorded(rec, inputs);
        }
        let e = engine()?;
        // Every buffer first: an allocation that must move to a dirty scheduler then
        // leaves nothing half-recorded.
        let buffers = self.alloc_buffers()?;
        let blocks = self.blocks_on(&buffers, |i| &inputs[i].as_ref().expect("fits").block);
        let mut accesses: Vec<Access<'_>> = Vec::new();
        for c in &self.commands {
            match c {
                Command::Dispatch {
                    pipeline,
                    push,
                    addr_words,
                    patches,
                    groups,
                    accesses: used,
                } => {
                    let words = patched(push, patches, &blocks);
                    accesses.clear();
                    accesses.extend(used.iter().map(|&(b, written)| {
                        if written {
                            Access::Write(blocks[b])
                        } else {
                            Access::Read(blocks[b])
                        }
                    }));
                    e.stream.dispatch(
                        pipeline,
                        pipeline.layout(),
                        &words,
                        *addr_words,
                        *groups,
                        &accesses,
                    )?;
                }
                Command::Update { block, data } => e.stream.update(blocks[*block], data)?,
            }
        }
        REPLAYS.fetch_add(1, Ordering::Relaxed);
        Ok(self
            .outputs
            .iter()
            .map(|o| Tensor {
                block: blocks[o.block].clone(),
                shape: o.shape.clone(),
                dtype: o.dtype,
                value_bits: o.value_bits,
            })
            .collect())
    }
}
