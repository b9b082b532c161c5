//! Device memory: tensor blocks from a size-class pool, and host-visible staging blocks.
//!
//! Every block is a storage buffer with a device address, so kernels reach it through push
//! constants (no descriptor sets, no `maxStorageBufferRange` limit).
//!
//! Reuse is stream-ordered, as CUDA's caching allocators do it: a block returns to its pool
//! when its last `Arc` drops (the tensor's term was garbage collected), even while batches
//! that use it are still on the GPU; they keep the buffer itself alive, not the block. A
//! buffer keeps its id across owners, so the stream's hazard tracking (which spans
//! batches) sees a new owner's writes after an old owner's uses and puts a barrier between
//! them, unless those uses' batches have completed. Which buffers an
//! allocation may take is [`Use`]'s business: the host may only write idle ones.

use crate::error::{Error, Result};
pub use crate::memory_limit::memory_limit;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use vulkano::buffer::{Buffer, BufferCreateInfo, BufferMemory, BufferUsage, Subbuffer};
use vulkano::device::{Device, DeviceOwned};
use vulkano::memory::allocator::{AllocationCreateInfo, MemoryTypeFilter, StandardMemoryAllocator};
use vulkano::memory::MemoryPropertyFlags;

/// Which pool a block belongs to.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Tensor storage: device-local (and host-mappable where the device offers it).
    Tensor,
    /// Host-visible, cached staging memory for transfers.
    Staging,
}

/// How the host can reach a block's bytes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum HostAccess {
    /// Not mappable: transfers go through a staging block.
    None,
    /// Mappable but uncached (reads cross the bus slowly; writes are fine).
    Uncached,
    /// Mappable and cached: reads and writes are fast.
    Cached,
}

/// What an allocation is for, which decides the pooled buffers it may take.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Use {
    /// Written by GPU work recorded from now on: an idle buffer, else one whose earlier
    /// uses are in submitted batches, and, for large ones, in the open batch too (a barrier
    /// then orders the new writes after the old uses; for small buffers a fresh one is
    /// cheaper than the lost overlap).
    Device,
    /// Written by the host before any GPU use: only buffers no batch is still using.
    Host,
}

/// Buffers of at least this size may be taken while the open batch still uses them, at
/// the cost of a barrier: an op on 128 MiB takes tens of microseconds even on an H200, a
/// barrier a few; and bursts of such ops otherwise hold one buffer per launch (ten 1 GiB
/// outputs for ten adds of 2^28 f32). The gain is memory, not speed: that add ran at the
/// same rate with one reused output (raw `nvidia-h200-2026-12-01o`).
pub const SAME_BATCH_REUSE_BYTES: u64 = 128 << 20;

/// New buffers of at least this size that GPU work writes (`Use::Device`) are created in
/// device-only memory, even where device memory is host-visible (resizable BAR): the host
/// reads such tensors through a staging copy anyway (`Tensor::read_into`), and on the H200
/// a fresh 64 MiB host-visible buffer cost about 480 us against 150 us device-only (raw
/// `nvidia-h200-2026-12-01u`). That cost is paid whenever the BEAM has not yet collected
/// a call's dead outputs, so the pool has none to give back.
pub const DEVICE_ONLY_BYTES: u64 = 16 << 20;

/// Size classes of at least this size keep one idle buffer ready in the pool: when an
/// allocation leaves none, a background thread creates the next one. A loop of large
/// compiled calls (a 4096² softmax: 64 MiB out per call) then finds its output buffer in
/// the pool on the normal scheduler, instead of collecting the caller's garbage and
/// creating one on a dirty scheduler each time the BEAM has not yet freed the previous
/// outputs. Spares stop while live and pooled memory exceed [`Memory::spare_budget`];
/// `NX_VULKAN_SPARES=0` turns them off.
pub const SPARE_BYTES: u64 = DEVICE_ONLY_BYTES;

/// Device-local memory the host does not see, where the device has such a type (else the
/// host-visible one).
fn device_only_filter() -> MemoryTypeFilter {
    MemoryTypeFilter {
        required_flags: MemoryPropertyFlags::DEVICE_LOCAL,
        preferred_flags: MemoryPropertyFlags::empty(),
        not_preferred_flags: MemoryPropertyFlags::HOST_VISIBLE,
    }
}

/// Where the command stream is, for stream-ordered reuse: shared by [`Memory`] and the
/// stream ([`crate::exec::Stream`]), which advances it.
#[derive(Debug)]
pub struct StreamOrder {
    /// The sequence number of the batch being recorded.
    pub open: AtomicU64,
    /// The highest sequence number known to have completed.
    pub completed: AtomicU64,
}

impl Default for StreamOrder {
    fn default() -> Self {
        StreamOrder {
            open: AtomicU64::new(1),
            completed: AtomicU64::new(0),
        }
    }
}

/// One buffer with its device address.
pub struct Block {
    buf: Option<Subbuffer<[u8]>>,
    /// Device address of byte 0.
    pub addr: u64,
    /// Usable size in bytes (the size class, >= what was asked for).
    pub capacity: u64,
    /// The buffer's id, for barrier tracking (kept across owners: see the module doc).
    pub id: u64,
    pub kind: Kind,
    pub host: HostAccess,
    /// Sequence number of the last batch that writes this block (0: none pending).
    pub(crate) last_write: AtomicU64,
    /// Sequence number of the last batch that reads or writes the buffer, under this owner
    /// or an earlier one (0: none).
    pub(crate) last_use: AtomicU64,
    memory: &'static Memory,
}

impl Block {
    /// The underlying buffer.
    pub fn buffer(&self) -> &Subbuffer<[u8]> {
        self.buf.as_ref().expect("block buffer present until drop")
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if let Some(buf) = self.buf.take() {
            let pooled = Pooled {
                buf,
                addr: self.addr,
                host: self.host,
                id: self.id,
                last_use: self.last_use.load(Ordering::Acquire),
            };
            self.memory.release(self.kind, self.capacity, pooled);
        }
    }
}

/// A buffer without an owner: how the host reaches it, its id and its last batch.
struct Pooled {
    buf: Subbuffer<[u8]>,
    /// The buffer's device address (asked of the driver once, when it is created).
    addr: u64,
    host: HostAccess,
    id: u64,
    last_use: u64,
}

/// Pooled buffers of a size class looked at per allocation, oldest first (the oldest are
/// the likeliest to be idle).
const POOL_SCAN: usize = 8;

#[derive(Default)]
struct PoolState {
    free: HashMap<u64, VecDeque<Pooled>>,
    idle_bytes: u64,
}

/// Counters for `Nx.Vulkan.memory_stats/0` and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes handed out and not yet returned.
    pub live_bytes: u64,
    /// Bytes held idle in the pools, ready for reuse.
    pub pooled_bytes: u64,
    /// Buffers created from the driver.
    pub created: u64,
    /// Allocations served from the pool.
    pub reused: u64,
    /// Spare buffers created ahead of need ([`SPARE_BYTES`]).
    pub spares: u64,
}

/// The spare-buffer thread's queue and the classes it has yet to fill.
#[derive(Default)]
struct Spares {
    queue: Option<mpsc::Sender<u64>>,
    pending: HashSet<u64>,
}

/// The allocator and the pools.
pub struct Memory {
    allocator: Arc<StandardMemoryAllocator>,
    tensor_filter: MemoryTypeFilter,
    pools: [Mutex<PoolState>; 2],
    idle_cap: u64,
    order: Arc<StreamOrder>,
    next_id: AtomicU64,
    live: AtomicU64,
    created: AtomicU64,
    reused: AtomicU64,
    spares: Mutex<Spares>,
    spares_on: bool,
    /// Live plus pooled bytes beyond which no spare is made (half the largest heap).
    spare_budget: u64,
    spares_created: AtomicU64,
    /// The most bytes of buffers the engine holds (`NX_VULKAN_MEMORY_LIMIT`; else none).
    limit: Option<u64>,
}

/// Rounds a request up to its size class: 4 classes per power of two, at least 256 bytes,
/// so pooled blocks waste at most a quarter of their size.
pub fn size_class(bytes: u64) -> u64 {
    let b = bytes.max(256);
    let p = 63 - (b - 1).leading_zeros() as u64; // b <= 2^(p+1)
    let step = 1u64 << (p - 2);
    b.div_ceil(step) * step
}

impl Memory {
    /// Sets up the allocator. Tensor memory is device-local and host-visible where the
    /// device has such memory in a large heap (resizable BAR, unified memory, lavapipe);
    /// otherwise device-local only, with transfers staged. `order` is the stream's
    /// position, which decides what pooled buffers an allocation may take.
    pub fn new(
        device: &Arc<Device>,
        host_visible_device_memory: bool,
        order: Arc<StreamOrder>,
    ) -> Result<Memory> {
        let allocator = Arc::new(StandardMemoryAllocator::new_default(device.clone()));
        let tensor_filter = if host_visible_device_memory {
            MemoryTypeFilter {
                required_flags: MemoryPropertyFlags::DEVICE_LOCAL
                    | MemoryPropertyFlags::HOST_VISIBLE,
                preferred_flags: MemoryPropertyFlags::HOST_COHERENT
                    | MemoryPropertyFlags::HOST_CACHED,
                not_preferred_flags: MemoryPropertyFlags::empty(),
            }
        } else {
            device_only_filter()
        };
        let heap: u64 = device
            .physical_device()
            .memory_properties()
            .memory_heaps
            .iter()
            .map(|h| h.size)
            .max()
            .unwrap_or(1 << 30);
        let limit = memory_limit(
            std::env::var("NX_VULKAN_MEMORY_LIMIT").ok().as_deref(),
            heap,
        )?;
        Ok(Memory {
            allocator,
            tensor_filter,
            pools: [Mutex::default(), Mutex::default()],
            idle_cap: heap / 2,
            order,
            next_id: AtomicU64::new(1),
            live: AtomicU64::new(0),
            created: AtomicU64::new(0),
            reused: AtomicU64::new(0),
            spares: Mutex::default(),
            spares_on: std::env::var("NX_VULKAN_SPARES").map_or(true, |v| v != "0"),
            spare_budget: limit.map_or(heap, |l| l.min(heap)) / 2,
            spares_created: AtomicU64::new(0),
            limit,
        })
    }

    /// The memory limit, if one is set (`NX_VULKAN_MEMORY_LIMIT`).
    pub fn limit(&self) -> Option<u64> {
        self.limit
    }

    fn pool(&self, kind: Kind) -> &Mutex<PoolState> {
        &self.pools[kind as usize]
    }

    /// A block of at least `bytes` bytes for `purpose`, from the pool when it holds a
    /// buffer of the size class that `purpose` may take, otherwise a new buffer.
    pub fn alloc(&'static self, kind: Kind, bytes: u64, purpose: Use) -> Result<Arc<Block>> {
        let class = size_class(bytes);
        if let Some(b) = self.alloc_pooled(kind, bytes, purpose)? {
            self.keep_spare(kind, class);
            return Ok(b);
        }
        let what = if kind == Kind::Tensor && class >= DEVICE_ONLY_BYTES {
            crate::nonblocking::LARGE_ALLOCATION
        } else {
            crate::nonblocking::POOL_MISS
        };
        let pooled = match crate::nonblocking::may_block(what)
            .and_then(|()| self.create(kind, class, purpose))
        {
            Ok(b) => b,
            Err(Error::OutOfMemory(_)) => {
                // Finished batches still hold dropped tensors' buffers until they are
                // retired: wait for the GPU, then free every idle buffer, then retry.
                if let Ok(e) = crate::engine::engine() {
                    e.stream.drain()?;
                }
                self.trim(0);
                self.create(kind, class, purpose)?
            }
            Err(e) => return Err(e),
        };
        let block = self.block(kind, class, pooled);
        self.keep_spare(kind, class);
        block
    }

    /// Asks the spare thread for a buffer of `class` when the pool holds none idle and the
    /// budget allows (see [`SPARE_BYTES`]).
    fn keep_spare(&'static self, kind: Kind, class: u64) {
        if !self.spares_on || kind != Kind::Tensor || class < SPARE_BYTES {
            return;
        }
        let idle = {
            let p = self.pool(kind).lock().unwrap_or_else(|e| e.into_inner());
            p.free.get(&class).is_some_and(|v| !v.is_empty())
        };
        let s = self.stats();
        if idle || s.live_bytes + s.pooled_bytes + class > self.spare_budget {
            return;
        }
        let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        if !spares.pending.insert(class) {
            return;
        }
        let queue = spares.queue.get_or_insert_with(|| {
            let (tx, rx) = mpsc::channel::<u64>();
            // Where no thread can start, the receiver goes with the closure: sends fail,
            // and no spare is made.
            let _thread = std::thread::Builder::new()
                .name("nx_vulkan-spares".into())
                .spawn(move || {
                    for class in rx {
                        self.make_spare(class);
                    }
                });
            tx
        });
        if queue.send(class).is_err() {
            spares.pending.remove(&class);
        }
    }

    /// Creates one idle buffer of `class` in the tensor pool (on the spare thread).
    fn make_spare(&self, class: u64) {
        if let Ok(pooled) = self.create(Kind::Tensor, class, Use::Device) {
            self.spares_created.fetch_add(1, Ordering::Relaxed);
            self.park(Kind::Tensor, class, pooled);
        }
        let mut spares = self.spares.lock().unwrap_or_else(|e| e.into_inner());
        spares.pending.remove(&class);
    }

    /// A block of at least `bytes` bytes for `purpose` if the pool holds a buffer of the
    /// size class that `purpose` may take; `None` (and nothing created) otherwise.
    pub fn alloc_pooled(
        &'static self,
        kind: Kind,
        bytes: u64,
        purpose: Use,
    ) -> Result<Option<Arc<Block>>> {
        let class = size_class(bytes);
        let open = self.order.open.load(Ordering::Acquire);
        let done = self.order.completed.load(Ordering::Acquire);
        let usable = |last_use: u64| match purpose {
            Use::Host => last_use <= done,
            Use::Device => last_use < open || class >= SAME_BATCH_REUSE_BYTES,
        };
        let pooled = {
            let mut p = self.pool(kind).lock().unwrap_or_else(|e| e.into_inner());
            // Idle buffers first: one that running work still uses costs the new owner a
            // barrier, which waits for everything in flight.
            let hit = p.free.get_mut(&class).and_then(|v| {
                let scan = || v.iter().take(POOL_SCAN);
                let i = scan()
                    .position(|e| e.last_use <= done)
                    .or_else(|| scan().position(|e| usable(e.last_use)))?;
                v.remove(i)
            });
            if hit.is_some() {
                p.idle_bytes -= class;
            }
            hit
        };
        match pooled {
            Some(pooled) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                self.block(kind, class, pooled).map(Some)
            }
            None => Ok(None),
        }
    }

    /// The block owning `pooled`, a buffer of size class `class`.
    fn block(&'static self, kind: Kind, class: u64, pooled: Pooled) -> Result<Arc<Block>> {
        let Pooled {
            buf,
            addr,
            host,
            id,
            last_use,
        } = pooled;
        self.live.fetch_add(class, Ordering::Relaxed);
        Ok(Arc::new(Block {
            buf: Some(buf),
            addr,
            capacity: class,
            id,
            kind,
            host,
            last_write: AtomicU64::new(0),
            last_use: AtomicU64::new(last_use),
            memory: self,
        }))
    }

    fn create(&self, kind: Kind, class: u64, purpose: Use) -> Result<Pooled> {
        if let Some(limit) = self.limit {
            // Idle pooled buffers go first; then the request fails as the driver's own
            // exhaustion does (`alloc` waits for the GPU, frees every idle buffer, and
            // tries once more before the error reaches the caller).
            let s = self.stats();
            if s.live_bytes + s.pooled_bytes + class > limit {
                self.trim(limit.saturating_sub(s.live_bytes + class));
            }
            let s = self.stats();
            if s.live_bytes + s.pooled_bytes + class > limit {
                return Err(Error::OutOfMemory(format!(
                    "a {class}-byte buffer would take the engine past its memory limit of \
                     {limit} bytes (NX_VULKAN_MEMORY_LIMIT): live tensors hold {} bytes, \
                     the pool {} idle",
                    s.live_bytes, s.pooled_bytes
                )));
            }
        }
        let filter = match kind {
            // Where no device-only memory type exists (lavapipe, unified memory), the
            // filter still picks the host-visible one.
            Kind::Tensor if purpose == Use::Device && class >= DEVICE_ONLY_BYTES => {
                device_only_filter()
            }
            Kind::Tensor => self.tensor_filter,
            Kind::Staging => MemoryTypeFilter::PREFER_HOST | MemoryTypeFilter::HOST_RANDOM_ACCESS,
        };
        let buf = Buffer::new_slice::<u8>(
            self.allocator.clone(),
            BufferCreateInfo {
                usage: BufferUsage::STORAGE_BUFFER
                    | BufferUsage::SHADER_DEVICE_ADDRESS
                    | BufferUsage::TRANSFER_SRC
                    | BufferUsage::TRANSFER_DST,
                ..Default::default()
            },
            AllocationCreateInfo {
                memory_type_filter: filter,
                ..Default::default()
            },
            class,
        )
        .map_err(|e| {
            let msg = format!("allocating {class} bytes: {e}");
            if msg.contains("OutOfDeviceMemory")
                || msg.contains("OutOfHostMemory")
                || msg.contains("out of")
            {
                Error::OutOfMemory(msg)
            } else {
                Error::Vulkan(msg)
            }
        })?;
        self.created.fetch_add(1, Ordering::Relaxed);
        let host = match buf.buffer().memory() {
            BufferMemory::Normal(a) => {
                let idx = a.device_memory().memory_type_index() as usize;
                let flags = self
                    .allocator
                    .device()
                    .physical_device()
                    .memory_properties()
                    .memory_types[idx]
                    .property_flags;
                if !flags.intersects(MemoryPropertyFlags::HOST_VISIBLE) {
                    HostAccess::None
                } else if flags.intersects(MemoryPropertyFlags::HOST_CACHED) {
                    HostAccess::Cached
                } else {
                    HostAccess::Uncached
                }
            }
            _ => HostAccess::None,
        };
        let addr = buf.device_address()?.get();
        Ok(Pooled {
            buf,
            addr,
            host,
            id: self.next_id.fetch_add(1, Ordering::Relaxed),
            last_use: 0,
        })
    }

    fn release(&self, kind: Kind, class: u64, pooled: Pooled) {
        self.live.fetch_sub(class, Ordering::Relaxed);
        self.park(kind, class, pooled);
    }

    /// Puts an ownerless buffer in its pool (or frees it past the idle cap).
    fn park(&self, kind: Kind, class: u64, pooled: Pooled) {
        let mut p = self.pool(kind).lock().unwrap_or_else(|e| e.into_inner());
        if p.idle_bytes + class <= self.idle_cap {
            p.idle_bytes += class;
            p.free.entry(class).or_default().push_back(pooled);
        }
    }

    /// Frees idle pooled blocks until at most `keep` bytes stay idle per pool.
    pub fn trim(&self, keep: u64) {
        for kind in [Kind::Tensor, Kind::Staging] {
            let mut p = self.pool(kind).lock().unwrap_or_else(|e| e.into_inner());
            let classes: Vec<u64> = p.free.keys().copied().collect();
            for c in classes {
                while p.idle_bytes > keep {
                    let popped = p.free.get_mut(&c).and_then(|v| v.pop_back());
                    match popped {
                        Some(_) => p.idle_bytes -= c,
                        None => break,
                    }
                }
            }
            p.free.retain(|_, v| !v.is_empty());
        }
    }

    /// Current counters.
    pub fn stats(&self) -> MemoryStats {
        let pooled = self
            .pools
            .iter()
            .map(|p| p.lock().unwrap_or_else(|e| e.into_inner()).idle_bytes)
            .sum();
        MemoryStats {
            live_bytes: self.live.load(Ordering::Relaxed),
            pooled_bytes: pooled,
            created: self.created.load(Ordering::Relaxed),
            reused: self.reused.load(Ordering::Relaxed),
            spares: self.spares_created.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_waste_at_most_a_quarter() {
        assert_eq!(size_class(0), 256);
        assert_eq!(size_class(256), 256);
        assert_eq!(size_class(257), 320);
        assert_eq!(size_class(1000), 1024);
        assert_eq!(size_class(1025), 1280);
        for b in [300u64, 4097, 1 << 20, (1 << 20) + 1, 123_456_789] {
            let c = size_class(b);
            assert!(c >= b && (c - b) * 4 <= c, "{b} -> {c}");
        }
    }
}
