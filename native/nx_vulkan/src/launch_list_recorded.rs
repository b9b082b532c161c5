//! Launch lists recorded once: the commands of a small list go into one secondary command
//! buffer the first time it replays, and every later replay executes that buffer.
//!
//! Re-recording a list costs the host about 1.5 µs per launch on an H100's host (the
//! driver's pipeline bind, push constants, dispatch and barriers; raw
//! `nvidia-h100-2026-12-07e`), 80 µs for a compiled Axon step. A recorded buffer's
//! addresses are fixed, so the list owns its buffers: one per fresh block (kept across
//! calls), one *landing* buffer per input (each call copies its input in), and each output
//! that the list writes is copied out to a new buffer (the caller keeps its outputs while
//! later calls reuse the list's). A call then records the input copies, one execution and
//! the output copies; the stream's hazard tracking orders them after earlier calls of the
//! same list. The commands and their order are the list's, so the results are its bytes.
//!
//! Lists whose own and landing buffers would exceed [`RECORDED_BYTES`] (a softmax over 64
//! MiB, where a copy costs more than recording one launch) replay command by command.
//! Those that hold a buffer the pool cannot give (out of memory) too.
//! `NX_VULKAN_RECORDED_LISTS=0` turns recording off, and so does `NX_VULKAN_PROFILE=1`:
//! the profiler times each command of a batch, and a recorded list is one command.

use super::{Command, LaunchList, Source};
use crate::engine::engine;
use crate::error::{Error, Result};
use crate::exec::{full_barrier, Access};
use crate::memory::{Block, Use};
use crate::tensor::Tensor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use vulkano::command_buffer::CommandBuffer;
use vulkano::pipeline::{ComputePipeline, Pipeline};

/// The most bytes a list's own and landing buffers may take for it to be recorded. They
/// stay allocated while the program lives (a process keeps up to 64 compiled functions),
/// and a list this small issues from the host in more time than its copies take the GPU;
/// larger lists are bound by the GPU, where re-recording costs little in comparison. (The
/// compiled Axon 784-128-10 step holds about 2 MiB.)
pub const RECORDED_BYTES: u64 = 8 << 20;

/// Whether small lists are recorded once: not with `NX_VULKAN_RECORDED_LISTS=0`, nor while
/// the profiler times each launch (`NX_VULKAN_PROFILE=1`).
fn recorded_lists() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        std::env::var("NX_VULKAN_RECORDED_LISTS").map_or(true, |v| v != "0")
            && !crate::exec_profile::wanted()
    })
}

/// Replays that executed a recorded list.
static RECORDED_RUNS: AtomicU64 = AtomicU64::new(0);

/// How many replays executed a list recorded once (for `Nx.Vulkan.stats/0` and tests).
pub fn recorded_runs() -> u64 {
    RECORDED_RUNS.load(Ordering::Relaxed)
}

/// A list recorded once, with the buffers its commands address.
pub(super) struct Recorded {
    /// One per `LaunchList::buffers`.
    own: Vec<Arc<Block>>,
    /// Per input slot, the buffer its input is copied into (`None`: an unread input).
    landing: Vec<Option<Arc<Block>>>,
    secondary: Arc<CommandBuffer>,
    /// The pipelines it binds (kept alive by each batch that executes it).
    pipelines: Vec<Arc<ComputePipeline>>,
    /// The launches and barriers it records.
    counts: (u64, u64),
}

impl LaunchList {
    /// The recorded form of the list, made on the first call that asks where the list is
    /// small enough; `None` where it replays command by command.
    pub(super) fn recorded(&self, inputs: &[Option<Tensor>]) -> Result<Option<&Recorded>> {
        if let Some(r) = self.recorded.get() {
            return Ok(r.as_ref());
        }
        let landing_bytes: u64 = self
            .blocks
            .iter()
            .filter_map(|s| match s {
                Source::Input(i) => inputs[*i].as_ref().map(|t| t.block.capacity),
                _ => None,
            })
            .sum();
        let own_bytes: u64 = self.buffers.iter().map(|&(_, b)| b).sum();
        if !recorded_lists() || own_bytes + landing_bytes > RECORDED_BYTES {
            let _ = self.recorded.set(None);
            return Ok(None);
        }
        // An allocation that would block fails before anything is set: the call is
        // retried whole where it may block. Where the list's own buffers do not fit in
        // memory, it replays command by command (freeing intermediates as it goes).
        match self.record(inputs) {
            Ok(rec) => {
                let _ = self.recorded.set(Some(rec));
            }
            Err(Error::OutOfMemory(_)) => {
                let _ = self.recorded.set(None);
            }
            Err(e) => return Err(e),
        }
        Ok(self.recorded.get().and_then(Option::as_ref))
    }

    /// Allocates the list's own and landing buffers and records its commands on them.
    fn record(&self, inputs: &[Option<Tensor>]) -> Result<Recorded> {
        let e = engine()?;
        let own = self.alloc_buffers()?;
        let mut landing: Vec<Option<Arc<Block>>> = vec![None; inputs.len()];
        for s in &self.blocks {
            if let Source::Input(i) = s {
                let b = &inputs[*i].as_ref().expect("fits").block;
                landing[*i] = Some(e.memory.alloc(b.kind, b.capacity, Use::Device)?);
            }
        }
        let blocks = self.recorded_blocks(&own, &landing);
        let mut pipelines: Vec<Arc<ComputePipeline>> = Vec::new();
        let mut counts = (0u64, 0u64);
        let secondary = e.stream.record_secondary(|cb| {
            let mut bound: Option<&Arc<ComputePipeline>> = None;
            for (k, c) in self.commands.iter().enumerate() {
                if k > 0 && self.levels[k] != self.levels[k - 1] {
                    unsafe { cb.pipeline_barrier_unchecked(&full_barrier()) };
                    counts.1 += 1;
                }
                match c {
                    Command::Dispatch {
                        pipeline,
                        push,
                        patches,
                        groups,
                        ..
                    } => {
                        if !bound.is_some_and(|p| Arc::ptr_eq(p, pipeline)) {
                            unsafe { cb.bind_pipeline_compute_unchecked(pipeline) };
                            bound = Some(pipeline);
                            if !pipelines.iter().any(|p| Arc::ptr_eq(p, pipeline)) {
                                pipelines.push(pipeline.clone());
                            }
                        }
                        let words = super::patched(push, patches, &blocks);
                        unsafe {
                            cb.push_constants_unchecked(pipeline.layout(), 0, &words);
                            cb.dispatch_unchecked(*groups);
                        }
                        counts.0 += 1;
                    }
                    Command::Update { block, data } => {
                        let target = blocks[*block].buffer().clone().slice(0..data.len() as u64);
                        unsafe { cb.update_buffer_unchecked(&target, data.as_slice()) };
                    }
                }
            }
            Ok(())
        })?;
        Ok(Recorded {
            own,
            landing,
            secondary,
            pipelines,
            counts,
        })
    }

    /// The buffer each of the list's blocks is on: `own` buffers, inputs' `landing` ones.
    fn recorded_blocks<'a>(
        &'a self,
        own: &'a [Arc<Block>],
        landing: &'a [Option<Arc<Block>>],
    ) -> Vec<&'a Arc<Block>> {
        self.blocks_on(own, |i| {
            landing[i].as_ref().expect("an input the list reads")
        })
    }

    /// One call of the recorded list on `inputs`: inputs copied in, the recorded commands
    /// executed, outputs copied out to new buffers.
    pub(super) fn run_recorded(
        &self,
        rec: &Recorded,
        inputs: &[Option<Tensor>],
    ) -> Result<Vec<Tensor>> {
        let e = engine()?;
        // Every new buffer first: an allocation that must move to a dirty scheduler then
        // leaves nothing half-recorded.
        let blocks = self.recorded_blocks(&rec.own, &rec.landing);
        let fresh_out = self
            .outputs
            .iter()
            .map(|o| match self.blocks[o.block] {
                Source::Fresh(_) => {
                    let b = blocks[o.block];
                    e.memory.alloc(b.kind, b.capacity, Use::Device).map(Some)
                }
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        for (t, landing) in inputs.iter().zip(&rec.landing) {
            if let (Some(t), Some(l)) = (t, landing) {
                e.stream
                    .copy(&t.block, 0, l, 0, t.block.capacity.min(l.capacity))?;
            }
        }
        let mut accesses: Vec<Access<'_>> =
            rec.landing.iter().flatten().map(Access::Read).collect();
        accesses.extend(self.blocks.iter().filter_map(|s| match s {
            Source::Kept(b) => Some(Access::Read(b)),
            _ => None,
        }));
        accesses.extend(rec.own.iter().map(Access::Write));
        e.stream
            .execute(&rec.secondary, &rec.pipelines, rec.counts, &accesses)?;
        let mut outs = Vec::with_capacity(self.outputs.len());
        for (o, fresh) in self.outputs.iter().zip(fresh_out) {
            let block = match (&self.blocks[o.block], fresh) {
                (Source::Fresh(_), Some(dst)) => {
                    let src = blocks[o.block];
                    e.stream.copy(src, 0, &dst, 0, src.capacity)?;
                    dst
                }
                (Source::Input(i), _) => inputs[*i].as_ref().expect("fits").block.clone(),
                (Source::Kept(b), _) => b.clone(),
                (Source::Fresh(_), None) => unreachable!("allocated above"),
            };
            outs.push(Tensor {
                block,
                shape: o.shape.clone(),
                dtype: o.dtype,
                value_bits: o.value_bits,
            });
        }
        RECORDED_RUNS.fetch_add(1, Ordering::Relaxed);
        super::REPLAYS.fetch_add(1, Ordering::Relaxed);
        Ok(outs)
    }
}
