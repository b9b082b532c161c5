//! Which earlier GPU work a command must wait for: the blocks written and read since the
//! last full barrier, each with the batch of its last such access. The maps span batches,
//! since a batch's end orders only the host's view (`end_of_batch_barrier` in `exec`), so
//! independent work of the next batch overlaps it on the GPU.

use crate::exec::Access;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::Ordering;

/// Hashes a block id (a counter) with one multiplication: the maps are consulted a few
/// times per launch, where the standard SipHash cost a launch about as much as recording
/// it. The ids come from the engine, not from users, so no flooding resistance is needed.
#[derive(Default)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ b as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }

    fn write_u64(&mut self, id: u64) {
        // Fibonacci hashing: the high bits, which hashbrown reads, depend on every bit.
        self.0 = id.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

/// A map keyed by block id.
type IdMap = HashMap<u64, u64, BuildHasherDefault<IdHasher>>;

/// Entries the maps hold before a full barrier empties them (they otherwise grow with
/// every block a run of independent launches touches).
const MAX_TRACKED: usize = 4096;

/// The hazard maps of a stream (used under its lock).
#[derive(Default)]
pub(crate) struct Hazards {
    written: IdMap,
    read: IdMap,
}

impl Hazards {
    /// Whether a command with `accesses` needs a full barrier first, with batches up to
    /// `completed` known finished.
    ///
    /// A read after its owner's GPU write always waits (the barrier also makes the data
    /// visible), and so does a write to a block its owner wrote before (kernels that update
    /// a block, such as a split K's later ranges, declare it as written only). Otherwise an
    /// access waits only for uses in batches not yet completed: a pooled buffer's new
    /// owner, which overwrites (on the GPU) or uploads (through a mapping) its data, owes
    /// nothing to the old owner's finished work. (Completion is what the progress marker or
    /// a fence shows; the marker is written after a barrier on all earlier commands, so
    /// every earlier command has finished by then.)
    pub fn need_barrier(&self, accesses: &[Access<'_>], completed: u64) -> bool {
        let pending = |m: &IdMap, id| m.get(&id).is_some_and(|&s| s > completed);
        self.written.len() + self.read.len() >= MAX_TRACKED
            || accesses.iter().any(|a| {
                let (b, is_write) = match a {
                    Access::Read(b) => (b, false),
                    Access::Write(b) => (b, true),
                };
                let after_write = if b.last_write.load(Ordering::Acquire) != 0 {
                    self.written.contains_key(&b.id)
                } else {
                    pending(&self.written, b.id)
                };
                after_write || (is_write && pending(&self.read, b.id))
            })
    }

    /// A full barrier was recorded: nothing before it is a hazard any more.
    pub fn clear(&mut self) {
        self.written.clear();
        self.read.clear();
    }

    /// Notes `accesses` of a command in batch `seq`.
    pub fn note(&mut self, accesses: &[Access<'_>], seq: u64) {
        for a in accesses {
            match a {
                Access::Read(b) => self.read.insert(b.id, seq),
                Access::Write(b) => self.written.insert(b.id, seq),
            };
        }
    }

    /// Forgets reads of batches up to `completed`: they order nothing any more (see
    /// `need_barrier`).
    pub fn retire(&mut self, completed: u64) {
        self.read.retain(|_, &mut seq| seq > completed);
    }
}
