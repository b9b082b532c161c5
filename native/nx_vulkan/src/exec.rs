//! Execution: dispatches are recorded into one open command buffer and submitted in
//! batches. The host waits only to read data (or when too many batches are in flight);
//! barriers are inserted only between dispatches that touch the same block.
//!
//! Locking: `Stream::state` guards recording (Vulkan command buffers and their pools need
//! external synchronization). No lock is held while waiting on a fence.

use crate::error::{Error, Result};
use crate::exec_hazards::Hazards;
use crate::exec_pool::{FencePool, RecyclingAllocator};
use crate::exec_profile::BatchQueries;
use crate::exec_progress::{spin_before_blocking, spin_on_fence, wait_fence, Progress};
use crate::exec_submit::Submission;
use crate::kernels::Push;
use crate::memory::{Block, StreamOrder};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use vulkano::buffer::Subbuffer;
use vulkano::command_buffer::allocator::CommandBufferAllocator;
use vulkano::command_buffer::{
    BufferCopy, CommandBuffer, CommandBufferBeginInfo, CommandBufferLevel, CommandBufferUsage,
    CopyBufferInfo, RecordingCommandBuffer,
};
use vulkano::descriptor_set::DescriptorSet;
use vulkano::device::{DeviceOwned, Queue};
use vulkano::memory::allocator::StandardMemoryAllocator;
use vulkano::pipeline::{ComputePipeline, PipelineBindPoint, PipelineLayout};
use vulkano::sync::fence::Fence;
use vulkano::sync::{AccessFlags, DependencyInfo, MemoryBarrier, PipelineStages};
use vulkano::VulkanObject;

/// `NX_VULKAN_TRACE=1` prints each submit and host wait with its duration to stderr.
pub(crate) fn trace() -> bool {
    static TRACE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TRACE.get_or_init(|| std::env::var("NX_VULKAN_TRACE").is_ok_and(|v| v == "1"))
}

/// Bytes one in-stream update (`Stream::update`, `vkCmdUpdateBuffer`) may carry: Vulkan's
/// limit for that command.
pub const MAX_UPDATE_BYTES: usize = 65_536;

/// Dispatches per command buffer before it is submitted without waiting.
const BATCH_COMMANDS: usize = 256;
/// Submitted batches allowed in flight before the host waits for the oldest.
const MAX_IN_FLIGHT: usize = 16;

/// A finished command buffer. vulkano's queue API only submits its own auto command
/// buffers, so ours go through the raw `vkQueueSubmit` (see `Stream::submit_locked`).
struct Finished(CommandBuffer);

/// The open command buffer. Only touched under `Stream::state`.
struct Open(RecordingCommandBuffer);
// SAFETY: the recording command buffer (and the pool it came from) is only used while
// `Stream::state` is locked, which provides Vulkan's external synchronization.
unsafe impl Send for Open {}

struct Recording {
    cb: Option<Open>,
    /// Sequence number the open batch will have when submitted.
    seq: u64,
    commands: usize,
    /// When the open batch's command buffer began.
    opened: std::time::Instant,
    /// The buffers of the blocks the batch uses (their blocks may be dropped, and their
    /// buffers pooled, before the batch completes: see `memory`).
    keep: Vec<Subbuffer<[u8]>>,
    keep_pipelines: Vec<Arc<ComputePipeline>>,
    /// Descriptor sets of foreign kernels recorded in the batch (`dispatch_with_set`).
    keep_sets: Vec<Arc<DescriptorSet>>,
    /// Secondary command buffers the batch executes (`execute`).
    keep_secondaries: Vec<Arc<CommandBuffer>>,
    bound: Option<u64>,
    /// What earlier work touched, across batches (see `exec_hazards`).
    hazards: Hazards,
    in_flight: VecDeque<Submitted>,
    /// Set when a submit failed (see `submit_locked`).
    failed: Option<Error>,
    /// The open batch's timestamps, with `NX_VULKAN_PROFILE=1` (see `exec_profile`).
    queries: Option<BatchQueries>,
}

struct Submitted {
    seq: u64,
    fence: Arc<Fence>,
    _cb: Arc<Finished>,
    keep: Vec<Subbuffer<[u8]>>,
    _pipelines: Vec<Arc<ComputePipeline>>,
    _sets: Vec<Arc<DescriptorSet>>,
    _secondaries: Vec<Arc<CommandBuffer>>,
    queries: Option<BatchQueries>,
}

/// Counters for tests and benchmarks.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExecStats {
    pub dispatches: u64,
    /// Writes carried in the command stream (`Stream::update`).
    pub updates: u64,
    pub barriers: u64,
    pub submits: u64,
    pub waits: u64,
}

/// The device's command stream.
pub struct Stream {
    queue: Arc<Queue>,
    cb_alloc: Arc<dyn CommandBufferAllocator>,
    /// Secondary command buffers' own pool, used under `secondary_lock`.
    secondary_alloc: Arc<dyn CommandBufferAllocator>,
    secondary_lock: Mutex<()>,
    fences: FencePool,
    state: Mutex<Recording>,
    /// The open batch's number and the last completed one (shared with the memory pool).
    order: Arc<StreamOrder>,
    dispatches: AtomicU64,
    updates: AtomicU64,
    barriers: AtomicU64,
    submits: AtomicU64,
    waits: AtomicU64,
    /// Where the GPU marks finished batches for host waits (see `exec_progress`).
    progress: Option<Progress>,
    /// When the open batch is submitted before a host wait (see `exec_submit`).
    submission: Submission,
    /// How long a host wait polls before blocking (see `spin_before_blocking`).
    spin: std::time::Duration,
}

/// What recording a command left of the command buffer's state.
#[derive(PartialEq, Eq)]
enum After {
    /// The bound pipeline is still bound.
    Same,
    /// Nothing is known to be bound (after a secondary command buffer ran).
    StateUnknown,
}

/// A block a dispatch touches, and how.
pub enum Access<'a> {
    Read(&'a Arc<Block>),
    Write(&'a Arc<Block>),
}

pub(crate) fn full_barrier() -> DependencyInfo {
    DependencyInfo {
        memory_barriers: vec![MemoryBarrier {
            src_stages: PipelineStages::ALL_COMMANDS,
            src_access: AccessFlags::MEMORY_WRITE,
            dst_stages: PipelineStages::ALL_COMMANDS,
            dst_access: AccessFlags::MEMORY_READ | AccessFlags::MEMORY_WRITE,
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

/// Ends every batch: its writes become visible to host reads, and the batch's transfer
/// commands after it (the progress marker) wait for all of its work. Later compute work
/// is not held back: a later batch's dispatch waits only where the hazard maps (which
/// span batches) say it touches what earlier work touches, so independent launches of
/// consecutive batches overlap on the GPU, as they do within one batch. (A full barrier
/// here made each submission drain the GPU: an f32 4096 matmul's last wave ran alone,
/// 40 TFLOP/s on the H200 in bursts of three against 45 in bursts of thirty, raw
/// nvidia-h200-2026-12-02h.)
fn end_of_batch_barrier() -> DependencyInfo {
    DependencyInfo {
        memory_barriers: vec![MemoryBarrier {
            src_stages: PipelineStages::ALL_COMMANDS,
            src_access: AccessFlags::MEMORY_WRITE,
            dst_stages: PipelineStages::ALL_TRANSFER | PipelineStages::HOST,
            dst_access: AccessFlags::TRANSFER_READ
                | AccessFlags::TRANSFER_WRITE
                | AccessFlags::HOST_READ,
            ..Default::default()
        }]
        .into(),
        ..Default::default()
    }
}

impl Stream {
    /// A stream on `queue`, advancing `order` as batches are submitted and complete.
    /// `device_is_cpu` picks the default submission policy (see `exec_submit`).
    pub fn new(queue: Arc<Queue>, order: Arc<StreamOrder>, device_is_cpu: bool) -> Result<Stream> {
        let cb_alloc = Arc::new(RecyclingAllocator::new(
            queue.device().clone(),
            queue.queue_family_index(),
        )?);
        let secondary_alloc = Arc::new(RecyclingAllocator::new(
            queue.device().clone(),
            queue.queue_family_index(),
        )?);
        let marker_memory = Arc::new(StandardMemoryAllocator::new_default(queue.device().clone()));
        Ok(Stream {
            progress: Progress::new(marker_memory),
            submission: Submission::from_env(device_is_cpu),
            spin: spin_before_blocking(device_is_cpu),
            fences: FencePool::new(queue.device().clone()),
            queue,
            cb_alloc,
            secondary_alloc,
            secondary_lock: Mutex::new(()),
            state: Mutex::new(Recording {
                cb: None,
                seq: 1,
                commands: 0,
                opened: std::time::Instant::now(),
                keep: Vec::new(),
                keep_pipelines: Vec::new(),
                keep_sets: Vec::new(),
                keep_secondaries: Vec::new(),
                bound: None,
                hazards: Hazards::default(),
                in_flight: VecDeque::new(),
                failed: None,
                queries: None,
            }),
            order,
            dispatches: AtomicU64::new(0),
            updates: AtomicU64::new(0),
            barriers: AtomicU64::new(0),
            submits: AtomicU64::new(0),
            waits: AtomicU64::new(0),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Recording> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counters since start.
    pub fn stats(&self) -> ExecStats {
        ExecStats {
            dispatches: self.dispatches.load(Ordering::Relaxed),
            updates: self.updates.load(Ordering::Relaxed),
            barriers: self.barriers.load(Ordering::Relaxed),
            submits: self.submits.load(Ordering::Relaxed),
            waits: self.waits.load(Ordering::Relaxed),
        }
    }

    /// Records work on the open command buffer: `record` gets the buffer after the
    /// barrier needed by `accesses` has been recorded. The blocks stay alive until the
    /// batch completes; written blocks are marked so readers know which batch to wait for.
    fn record(
        &self,
        accesses: &[Access<'_>],
        pipeline: Option<&Arc<ComputePipeline>>,
        record: impl FnOnce(&mut RecordingCommandBuffer) -> Result<After>,
    ) -> Result<()> {
        let mut guard = self.lock();
        let st = &mut *guard;
        if let Some(e) = &st.failed {
            return Err(e.clone());
        }
        if st.commands + 1 >= BATCH_COMMANDS
            && st.in_flight.len() >= MAX_IN_FLIGHT
            && crate::nonblocking::active()
        {
            // This command ends the batch, and submitting it would wait for the oldest.
            self.retire_locked(st)?;
            if st.in_flight.len() >= MAX_IN_FLIGHT {
                return Err(Error::WouldBlock("back-pressure from batches in flight"));
            }
        }
        if st.cb.is_none() {
            let t0 = std::time::Instant::now();
            let mut cb = RecordingCommandBuffer::new(
                self.cb_alloc.clone(),
                self.queue.queue_family_index(),
                CommandBufferLevel::Primary,
                CommandBufferBeginInfo {
                    usage: CommandBufferUsage::OneTimeSubmit,
                    ..Default::default()
                },
            )?;
            if crate::exec_profile::wanted() {
                st.queries = BatchQueries::begin(self.queue.device(), &mut cb, BATCH_COMMANDS)?;
            }
            if trace() {
                eprintln!("[nx_vulkan] begin {}: {:?}", st.seq, t0.elapsed());
            }
            st.cb = Some(Open(cb));
            st.opened = std::time::Instant::now();
            st.bound = None;
        }
        let completed = self.order.completed.load(Ordering::Acquire);
        let hazard = st.hazards.need_barrier(accesses, completed);
        let seq = st.seq;
        let st = &mut *st;
        let cb = &mut st.cb.as_mut().expect("opened above").0;
        if hazard {
            unsafe { cb.pipeline_barrier_unchecked(&full_barrier()) };
            st.hazards.clear();
            self.barriers.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(p) = pipeline {
            let key = ash::vk::Handle::as_raw(p.handle());
            if st.bound != Some(key) {
                unsafe { cb.bind_pipeline_compute_unchecked(p) };
                st.bound = Some(key);
                if !st.keep_pipelines.iter().any(|k| Arc::ptr_eq(k, p)) {
                    st.keep_pipelines.push(p.clone());
                }
            }
        }
        if record(cb)? == After::StateUnknown {
            st.bound = None;
        }
        if let Some(q) = st.queries.as_mut() {
            q.after(
                cb,
                pipeline.map_or(0, |p| ash::vk::Handle::as_raw(p.handle())),
            );
        }
        st.hazards.note(accesses, seq);
        for a in accesses {
            let b = match a {
                Access::Read(b) => b,
                Access::Write(b) => {
                    b.last_write.store(seq, Ordering::Release);
                    b
                }
            };
            b.last_use.store(seq, Ordering::Release);
            st.keep.push(b.buffer().clone());
        }
        st.commands += 1;
        // An early submission never makes the host wait: it leaves room in flight.
        let early = self.submission != Submission::Never
            && st.in_flight.len() < MAX_IN_FLIGHT
            && self
                .submission
                .submit_now(self.running(st), st.opened.elapsed());
        if st.commands >= BATCH_COMMANDS || early {
            let backlog = self.submit_locked(st)?;
            drop(guard);
            if let Some(f) = backlog {
                wait_fence(&f, self.spin)?;
            }
        }
        Ok(())
    }

    /// Submitted batches not yet finished, as far as the progress marker shows without a
    /// driver call (all of them where there is no marker). Batches finish in order.
    fn running(&self, st: &Recording) -> usize {
        match &self.progress {
            Some(p) => st
                .in_flight
                .iter()
                .rev()
                .take_while(|s| !p.reached(s.seq))
                .count(),
            None => st.in_flight.len(),
        }
    }

    /// The batch being recorded (the next to be submitted).
    pub fn open_batch(&self) -> u64 {
        self.order.open.load(Ordering::Acquire)
    }

    /// The last batch known to have completed (as of the last retirement).
    pub fn completed_batch(&self) -> u64 {
        self.order.completed.load(Ordering::Acquire)
    }

    /// Records one compute dispatch with 128 bytes of push constants.
    /// Bit `i` of `addr_words` marks words `i` and `i + 1` of `push` as a device address
    /// (what a recorded launch list patches; see `launch_list`).
    pub fn dispatch(
        &self,
        pipeline: &Arc<ComputePipeline>,
        layout: &PipelineLayout,
        push: &Push,
        addr_words: u32,
        groups: [u32; 3],
        accesses: &[Access<'_>],
    ) -> Result<()> {
        crate::launch_list::note_dispatch(pipeline, push, addr_words, groups, accesses);
        self.dispatches.fetch_add(1, Ordering::Relaxed);
        self.record(accesses, Some(pipeline), |cb| {
            unsafe {
                cb.push_constants_unchecked(layout, 0, push);
                cb.dispatch_unchecked(groups);
            }
            Ok(After::Same)
        })
    }

    /// Records one dispatch of a kernel that binds its buffers through descriptor set 0
    /// (foreign SPIR-V: `kernels::foreign`), with `push` as its push constants. The set
    /// lives until the batch completes; `accesses` must name every block it binds.
    pub fn dispatch_with_set(
        &self,
        pipeline: &Arc<ComputePipeline>,
        layout: &PipelineLayout,
        set: Arc<DescriptorSet>,
        push: &[u8],
        groups: [u32; 3],
        accesses: &[Access<'_>],
    ) -> Result<()> {
        crate::launch_list::spoil("a kernel bound through a descriptor set");
        self.dispatches.fetch_add(1, Ordering::Relaxed);
        let kept = set.clone();
        self.record(accesses, Some(pipeline), |cb| {
            unsafe {
                cb.bind_descriptor_sets_unchecked(
                    PipelineBindPoint::Compute,
                    layout,
                    0,
                    &[set.as_raw()],
                    &[],
                );
                // Word by word: the block's size is the kernel's, known only at run time.
                for (i, w) in push.chunks(4).enumerate() {
                    let mut word = [0u8; 4];
                    word[..w.len()].copy_from_slice(w);
                    cb.push_constants_unchecked(layout, 4 * i as u32, &u32::from_le_bytes(word));
                }
                cb.dispatch_unchecked(groups);
            }
            Ok(After::Same)
        })?;
        // Kept by the open batch: the dispatch's own batch, or a later one if recording
        // it ended a batch; either completes no earlier than the dispatch.
        self.lock().keep_sets.push(kept);
        Ok(())
    }

    /// Records `commands` once into a secondary command buffer that [`Stream::execute`]
    /// runs as often as asked, in several batches at once (simultaneous use). The commands
    /// order themselves (their own barriers); `execute` orders them after earlier work.
    pub fn record_secondary(
        &self,
        commands: impl FnOnce(&mut RecordingCommandBuffer) -> Result<()>,
    ) -> Result<Arc<CommandBuffer>> {
        // The secondary pool is used under its own lock (Vulkan wants pools synchronized).
        let _pool = self
            .secondary_lock
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut cb = RecordingCommandBuffer::new(
            self.secondary_alloc.clone(),
            self.queue.queue_family_index(),
            CommandBufferLevel::Secondary,
            CommandBufferBeginInfo {
                usage: CommandBufferUsage::SimultaneousUse,
                inheritance_info: Some(Default::default()),
                ..Default::default()
            },
        )?;
        commands(&mut cb)?;
        Ok(Arc::new(unsafe { cb.end() }?))
    }

    /// Records a run of `secondary` (from [`Stream::record_secondary`]), which touches
    /// `accesses`; the batch keeps it alive until it completes. `pipelines` are those it
    /// binds, kept alive with it; `launches` and `barriers` what it records (counted in
    /// [`Stream::stats`]).
    pub fn execute(
        &self,
        secondary: &Arc<CommandBuffer>,
        pipelines: &[Arc<ComputePipeline>],
        (launches, barriers): (u64, u64),
        accesses: &[Access<'_>],
    ) -> Result<()> {
        crate::launch_list::spoil("a recorded command buffer");
        self.dispatches.fetch_add(launches, Ordering::Relaxed);
        self.barriers.fetch_add(barriers, Ordering::Relaxed);
        self.record(accesses, None, |cb| {
            unsafe { cb.execute_commands_unchecked(&[&**secondary]) };
            Ok(After::StateUnknown)
        })?;
        // Kept by the open batch (as `dispatch_with_set`'s sets are).
        let mut st = self.lock();
        st.keep_secondaries.push(secondary.clone());
        for p in pipelines {
            if !st.keep_pipelines.iter().any(|k| Arc::ptr_eq(k, p)) {
                st.keep_pipelines.push(p.clone());
            }
        }
        Ok(())
    }

    /// Records a buffer-to-buffer copy of `bytes` bytes.
    pub fn copy(
        &self,
        src: &Arc<Block>,
        src_offset: u64,
        dst: &Arc<Block>,
        dst_offset: u64,
        bytes: u64,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        crate::launch_list::spoil("a buffer copy");
        let info = CopyBufferInfo {
            regions: vec![BufferCopy {
                src_offset,
                dst_offset,
                size: bytes,
                ..Default::default()
            }]
            .into(),
            ..CopyBufferInfo::buffers(src.buffer().clone(), dst.buffer().clone())
        };
        self.record(&[Access::Read(src), Access::Write(dst)], None, |cb| {
            unsafe { cb.copy_buffer_unchecked(&info) };
            Ok(After::Same)
        })
    }

    /// Records a write of `data` at the start of `dst`, the bytes carried inside the
    /// command buffer (`vkCmdUpdateBuffer`): at most [`MAX_UPDATE_BYTES`], a multiple of 4.
    pub fn update(&self, dst: &Arc<Block>, data: &[u8]) -> Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        if !data.len().is_multiple_of(4)
            || data.len() > MAX_UPDATE_BYTES
            || data.len() as u64 > dst.capacity
        {
            return Err(Error::InvalidArgument(format!(
                "an in-stream update of {} bytes (at most {MAX_UPDATE_BYTES}, a multiple of 4, \
                 within the block's {})",
                data.len(),
                dst.capacity
            )));
        }
        crate::launch_list::note_update(dst, data);
        let target = dst.buffer().clone().slice(0..data.len() as u64);
        self.updates.fetch_add(1, Ordering::Relaxed);
        self.record(&[Access::Write(dst)], None, |cb| {
            unsafe { cb.update_buffer_unchecked(&target, data) };
            Ok(After::Same)
        })
    }

    /// Submits the open batch. A failure here loses recorded work whose ops already
    /// returned, so it poisons the stream: every later record or wait returns the error.
    fn submit_locked(&self, st: &mut Recording) -> Result<Option<Arc<Fence>>> {
        let r = self.try_submit_locked(st);
        if let Err(e) = &r {
            st.failed = Some(Error::Vulkan(format!(
                "a batch of GPU work failed to submit, results since are lost: {e}"
            )));
        }
        r
    }

    /// Returns the fence to wait for when too many batches are in flight (the caller
    /// waits after releasing the lock).
    fn try_submit_locked(&self, st: &mut Recording) -> Result<Option<Arc<Fence>>> {
        let Some(Open(mut cb)) = st.cb.take() else {
            return Ok(None);
        };
        let t0 = std::time::Instant::now();
        unsafe { cb.pipeline_barrier_unchecked(&end_of_batch_barrier()) };
        if let Some(p) = &self.progress {
            // SAFETY: `cb` is batch `st.seq`'s open command buffer, under the lock.
            unsafe { p.record(&mut cb, st.seq) };
        }
        let finished = Arc::new(Finished(unsafe { cb.end() }?));
        let t_end = t0.elapsed();
        let fence = self.fences.take()?;
        let t_fence = t0.elapsed();
        let handles = [finished.0.handle()];
        let submit = ash::vk::SubmitInfo::default().command_buffers(&handles);
        let fns = self.queue.device().fns();
        // SAFETY: the queue is used only here and only under `Stream::state`; the command
        // buffer and everything it references stay alive in `in_flight` until the fence
        // has signalled.
        unsafe { (fns.v1_0.queue_submit)(self.queue.handle(), 1, &submit, fence.handle()) }
            .result()
            .map_err(vulkano::VulkanError::from)?;
        self.submits.fetch_add(1, Ordering::Relaxed);
        if trace() {
            eprintln!(
                "[nx_vulkan] submit {} ({} commands): {:?} (end {:?}, fence {:?})",
                st.seq,
                st.commands,
                t0.elapsed(),
                t_end,
                t_fence - t_end
            );
        }
        st.in_flight.push_back(Submitted {
            seq: st.seq,
            fence,
            _cb: finished,
            keep: std::mem::take(&mut st.keep),
            _pipelines: std::mem::take(&mut st.keep_pipelines),
            _sets: std::mem::take(&mut st.keep_sets),
            _secondaries: std::mem::take(&mut st.keep_secondaries),
            queries: st.queries.take(),
        });
        st.seq += 1;
        self.order.open.store(st.seq, Ordering::Release);
        st.commands = 0;
        st.bound = None;
        self.retire_locked(st)?;
        if st.in_flight.len() > MAX_IN_FLIGHT {
            return Ok(st.in_flight.front().map(|s| s.fence.clone()));
        }
        Ok(None)
    }

    /// Drops completed batches (releasing their blocks). Called with the state locked,
    /// so command buffers are freed under the same lock that guards recording.
    fn retire_locked(&self, st: &mut Recording) -> Result<()> {
        // Batches the progress marker shows finished no longer use their blocks: those go
        // back to the pool now, before the (possibly late) fence frees the rest.
        if let Some(p) = &self.progress {
            for s in st.in_flight.iter_mut() {
                if !p.reached(s.seq) {
                    break;
                }
                s.keep.clear();
                self.order.completed.fetch_max(s.seq, Ordering::AcqRel);
            }
        }
        while let Some(front) = st.in_flight.front() {
            if !front.fence.is_signaled()? {
                break;
            }
            let done = st.in_flight.pop_front().expect("front exists");
            self.order.completed.fetch_max(done.seq, Ordering::AcqRel);
            let Submitted { fence, queries, .. } = done;
            self.fences.give_back(fence);
            if let Some(q) = queries {
                q.collect();
            }
        }
        st.hazards
            .retire(self.order.completed.load(Ordering::Acquire));
        Ok(())
    }

    /// Submits the open batch, if any, without waiting.
    pub fn flush(&self) -> Result<()> {
        let backlog = self.submit_locked(&mut self.lock())?;
        if let Some(f) = backlog {
            wait_fence(&f, self.spin)?;
        }
        Ok(())
    }

    /// Blocks until every batch up to and including `seq` has completed. Submits the
    /// open batch first when `seq` is still being recorded. Holds no lock while waiting.
    pub fn wait_for(&self, seq: u64) -> Result<()> {
        if seq == 0 || self.order.completed.load(Ordering::Acquire) >= seq {
            return Ok(());
        }
        let fence = {
            let mut st = self.lock();
            if let Some(e) = &st.failed {
                return Err(e.clone());
            }
            if st.seq <= seq && st.cb.is_some() {
                self.submit_locked(&mut st)?;
            }
            self.retire_locked(&mut st)?;
            if self.order.completed.load(Ordering::Acquire) >= seq {
                return Ok(());
            }
            st.in_flight
                .iter()
                .find(|s| s.seq >= seq)
                .map(|s| s.fence.clone())
        };
        let Some(fence) = fence else {
            return Err(Error::Vulkan(format!(
                "batch {seq} is neither recorded nor in flight"
            )));
        };
        self.waits.fetch_add(1, Ordering::Relaxed);
        let t0 = std::time::Instant::now();
        let nonblocking = crate::nonblocking::active();
        // Non-blocking calls poll for less time, and not at all where waits never poll.
        let budget = if nonblocking && !self.spin.is_zero() {
            crate::nonblocking::SPIN
        } else {
            self.spin
        };
        // The marker shows the batch finished without a driver call; the fence (which
        // recycles its resources) is then left to later retirement.
        let marked = self.progress.as_ref().is_some_and(|p| p.wait(seq, budget));
        if marked {
            self.order.completed.fetch_max(seq, Ordering::AcqRel);
            if trace() {
                eprintln!("[nx_vulkan] wait for {seq} (marker): {:?}", t0.elapsed());
            }
            // Our clone would keep retirement from recycling the fence (see below).
            drop(fence);
            let mut st = self.lock();
            return self.retire_locked(&mut st);
        }
        if nonblocking {
            // Without a marker the fence gets the spin; with one, it has had it.
            if self.progress.is_some() || !spin_on_fence(&fence, budget)? {
                return Err(Error::WouldBlock("the GPU (a host wait)"));
            }
        } else {
            wait_fence(&fence, self.spin)?;
        }
        if trace() {
            eprintln!("[nx_vulkan] wait for {seq}: {:?}", t0.elapsed());
        }
        // Retirement recycles only fences no one else holds: with this clone alive, every
        // fence waited on was dropped, and the next submission created one, which took the
        // host 350-550 us on the H200 (raw nvidia-h200-2026-12-02h).
        drop(fence);
        let mut st = self.lock();
        self.retire_locked(&mut st)
    }

    /// Waits until the data of `block` is final (its last writer has completed).
    pub fn wait_block(&self, block: &Block) -> Result<()> {
        self.wait_for(block.last_write.load(Ordering::Acquire))
    }

    /// Waits until every submitted batch's fence has signalled and retires them all, so
    /// the blocks they held are back in the pool (the out-of-memory path needs this).
    pub fn drain(&self) -> Result<()> {
        self.synchronize()?;
        let fences: Vec<Arc<Fence>> = self
            .lock()
            .in_flight
            .iter()
            .map(|s| s.fence.clone())
            .collect();
        for f in &fences {
            f.wait(None)?;
        }
        let mut st = self.lock();
        self.retire_locked(&mut st)
    }

    /// Waits for all recorded work.
    pub fn synchronize(&self) -> Result<()> {
        // `seq` names the open batch; with none open, the last submitted one (a `seq`
        // that was never recorded would be "neither recorded nor in flight").
        let seq = {
            let st = self.lock();
            if st.cb.is_some() {
                st.seq
            } else {
                st.seq - 1
            }
        };
        self.wait_for(seq)
    }
}
