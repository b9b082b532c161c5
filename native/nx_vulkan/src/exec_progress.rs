//! A progress marker the GPU writes into host memory at the end of every batch, so the
//! host can see a batch finish by reading memory, as CUDA's stream synchronisation does.
//!
//! Why: on NVIDIA's driver (seen on an H200), polling `vkGetFenceStatus` in a loop made a
//! 4-element round trip take ~0.54 ms, although the GPU work was done in tens of µs (the
//! same fence checked once, after a pause, was already signalled), and blocking in
//! `vkWaitForFences` wakes ~0.5 ms late. Reading coherent host memory involves no driver
//! call. Fences stay the authority for recycling resources; the marker only tells a
//! waiting reader that the data is final. The fence waits (spin, then block) are here
//! too: the other way the host sees a batch finish.

use crate::error::Result;
use std::sync::Arc;
use vulkano::buffer::{Buffer, BufferCreateInfo, BufferMemory, BufferUsage, Subbuffer};
use vulkano::command_buffer::RecordingCommandBuffer;
use vulkano::device::DeviceOwned;
use vulkano::memory::allocator::{AllocationCreateInfo, MemoryTypeFilter, StandardMemoryAllocator};
use vulkano::memory::MemoryPropertyFlags;
use vulkano::sync::fence::Fence;
use vulkano::sync::{AccessFlags, DependencyInfo, MemoryBarrier, PipelineStages};

/// One u32 in host-visible, host-coherent memory holding the last finished batch's
/// sequence number (mod 2^32).
pub struct Progress {
    buf: Subbuffer<[u32]>,
    word: *const u32,
}

// SAFETY: `word` points into `buf`'s persistent mapping, which lives as long as `buf`;
// the host only reads it (volatile), the GPU only writes it.
unsafe impl Send for Progress {}
unsafe impl Sync for Progress {}

impl Progress {
    /// The marker, or None when the device offers no host-coherent memory to put it in
    /// (then waits use fences alone).
    pub fn new(allocator: Arc<StandardMemoryAllocator>) -> Option<Progress> {
        let buf = Buffer::new_slice::<u32>(
            allocator,
            BufferCreateInfo {
                usage: BufferUsage::TRANSFER_DST,
                ..Default::default()
            },
            AllocationCreateInfo {
                memory_type_filter: MemoryTypeFilter::PREFER_HOST
                    | MemoryTypeFilter::HOST_RANDOM_ACCESS,
                ..Default::default()
            },
            1,
        )
        .ok()?;
        let BufferMemory::Normal(a) = buf.buffer().memory() else {
            return None;
        };
        let device = a.device_memory().device().clone();
        let idx = a.device_memory().memory_type_index() as usize;
        let flags = device.physical_device().memory_properties().memory_types[idx].property_flags;
        if !flags.contains(MemoryPropertyFlags::HOST_COHERENT) {
            return None;
        }
        let word = buf.mapped_slice().ok()?.as_ptr() as *const u32;
        // SAFETY: mapped, 4 bytes, nothing on the GPU touches it yet.
        unsafe { (word as *mut u32).write_volatile(0) };
        Some(Progress { buf, word })
    }

    /// Records, at the end of batch `seq` (after its end-of-batch barrier), the write of
    /// `seq` into the marker and the barrier that makes it visible to the host.
    ///
    /// # Safety
    /// `cb` must be the open command buffer of batch `seq`, recorded under the stream lock.
    pub unsafe fn record(&self, cb: &mut RecordingCommandBuffer, seq: u64) {
        unsafe {
            cb.fill_buffer_unchecked(&self.buf, seq as u32);
            cb.pipeline_barrier_unchecked(&DependencyInfo {
                memory_barriers: vec![MemoryBarrier {
                    src_stages: PipelineStages::ALL_TRANSFER,
                    src_access: AccessFlags::TRANSFER_WRITE,
                    dst_stages: PipelineStages::HOST,
                    dst_access: AccessFlags::HOST_READ,
                    ..Default::default()
                }]
                .into(),
                ..Default::default()
            });
        }
    }

    /// Whether batch `seq` has finished, as far as the marker shows.
    pub fn reached(&self, seq: u64) -> bool {
        // SAFETY: the mapping outlives `self`; the GPU writes whole u32s.
        let v = unsafe { self.word.read_volatile() };
        (v.wrapping_sub(seq as u32) as i32) >= 0
    }

    /// Spins on the marker for at most `budget`; true when batch `seq` was seen finishing.
    pub fn wait(&self, seq: u64, budget: std::time::Duration) -> bool {
        let start = std::time::Instant::now();
        loop {
            if self.reached(seq) {
                return true;
            }
            if start.elapsed() > budget {
                return false;
            }
            std::hint::spin_loop();
        }
    }
}

// Fence waits, for streams without a marker and for recycling (the fence stays the
// authority there).

/// How long a host wait polls the fence before blocking in the driver. Some drivers
/// (NVIDIA's, seen on an H200) wake a blocked waiter ~0.5 ms after the GPU finishes;
/// polling keeps short waits short, as CUDA's default spin-then-yield does.
pub(crate) const SPIN_BEFORE_BLOCKING: std::time::Duration = std::time::Duration::from_millis(2);

/// How long host waits poll the GPU before blocking in the driver: on GPUs
/// `SPIN_BEFORE_BLOCKING` (a blocked waiter wakes late on some drivers), on CPU devices
/// (lavapipe) nothing, since a polling host takes a core from the threads that do the
/// "GPU's" work (with spinning, eXMC's momentum sampling ran 1.4x slower on 2 cores).
/// Without a spin, a read on a normal scheduler that finds its batch unfinished moves to
/// a dirty scheduler at once, instead of polling there first. `NX_VULKAN_SPIN_WAIT=0`/`1`
/// overrides.
pub(crate) fn spin_before_blocking(device_is_cpu: bool) -> std::time::Duration {
    let spin = match std::env::var("NX_VULKAN_SPIN_WAIT").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => !device_is_cpu,
    };
    if spin {
        SPIN_BEFORE_BLOCKING
    } else {
        std::time::Duration::ZERO
    }
}

/// Waits for `fence`: polls it for `spin` (`SPIN_BEFORE_BLOCKING` on GPUs, nothing on
/// CPU devices: see `Stream`), then blocks in the driver.
pub(crate) fn wait_fence(fence: &Fence, spin: std::time::Duration) -> Result<()> {
    if spin.is_zero() || !spin_on_fence(fence, spin)? {
        fence.wait(None)?;
    }
    Ok(())
}

/// Polls `fence` for at most `budget`; whether it signalled.
pub(crate) fn spin_on_fence(fence: &Fence, budget: std::time::Duration) -> Result<bool> {
    let start = std::time::Instant::now();
    while !fence.is_signaled()? {
        if start.elapsed() > budget {
            return Ok(false);
        }
        std::hint::spin_loop();
    }
    Ok(true)
}
