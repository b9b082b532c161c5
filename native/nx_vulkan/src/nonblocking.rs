//! Calls that must not block.
//!
//! A NIF on one of the BEAM's normal schedulers must return within about a millisecond;
//! moving a call to a dirty scheduler costs several microseconds of thread hand-off each
//! way, which is most of what a small op costs. So the hot NIFs first run the engine in
//! *non-blocking mode* on the normal scheduler: every point where the engine could block
//! returns [`Error::WouldBlock`] instead, and the caller retries the whole call on a dirty
//! scheduler. Those points are: initialising the engine, building a pipeline, allocating
//! device memory outside the pools, back-pressure from too many batches in flight, a host
//! wait for the GPU longer than [`SPIN`], and a host copy larger than [`HOST_COPY_BYTES`].
//!
//! Retrying is safe because ops are functional: they write only blocks they allocate, so
//! a call abandoned part-way leaves behind nothing but discarded GPU work, and the
//! abandoning happens only where a blocking call would have waited anyway.

use crate::error::{Error, Result};
use std::cell::Cell;
use std::time::Duration;

/// What [`may_block`] names for a new device allocation of at least
/// [`crate::memory::DEVICE_ONLY_BYTES`]: the NIF answers `{:would_block_collect, :large}`,
/// and the Elixir side garbage-collects the calling process and tries again, so that its
/// dead tensors' buffers go back to the pool first (the BEAM frees a tensor only when the
/// process that held it is collected; a fresh 64 MiB buffer costs 150 us or more).
pub const LARGE_ALLOCATION: &str = "a large device allocation";

/// What [`may_block`] names for a smaller new device allocation (the pool had no idle
/// buffer of its size class): the NIF answers `{:would_block_collect, :small}`, and the
/// Elixir side makes a minor collection of the calling process and tries again before it
/// moves to a dirty scheduler. A loop whose results die each iteration (a training step's
/// old parameters) otherwise misses the pool on every call until the BEAM collects on its
/// own, and each miss repeats the whole call on a dirty scheduler.
pub const POOL_MISS: &str = "a device allocation";

/// How long a non-blocking host wait spins on the GPU before giving up.
pub const SPIN: Duration = Duration::from_micros(200);

/// The largest host copy (upload or download, in bytes) done in non-blocking mode.
pub const HOST_COPY_BYTES: usize = 1 << 18;

thread_local! {
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// Resets the mode when `attempt` returns or unwinds.
struct Reset(bool);

impl Drop for Reset {
    fn drop(&mut self) {
        ACTIVE.with(|a| a.set(self.0));
    }
}

/// Runs `f` in non-blocking mode on this thread: where it would block it fails with
/// [`Error::WouldBlock`], and the caller should run it again normally (on a thread that
/// may block).
pub fn attempt<T>(f: impl FnOnce() -> T) -> T {
    let _reset = Reset(ACTIVE.with(|a| a.replace(true)));
    f()
}

/// Whether this thread is in non-blocking mode.
pub fn active() -> bool {
    ACTIVE.with(Cell::get)
}

/// Fails with [`Error::WouldBlock`] in non-blocking mode: `what` is about to block.
pub fn may_block(what: &'static str) -> Result<()> {
    if active() {
        Err(Error::WouldBlock(what))
    } else {
        Ok(())
    }
}

/// Fails with [`Error::WouldBlock`] in non-blocking mode when a host copy of `bytes`
/// bytes is too long for a normal scheduler.
pub fn host_copy(bytes: usize) -> Result<()> {
    if bytes > HOST_COPY_BYTES {
        may_block("a large host copy")
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mode_holds_only_inside_attempt() {
        assert!(!active());
        assert_eq!(may_block("x"), Ok(()));
        let inside = attempt(|| (active(), may_block("a pipeline build")));
        assert_eq!(inside, (true, Err(Error::WouldBlock("a pipeline build"))));
        assert!(!active());
        assert_eq!(attempt(|| host_copy(HOST_COPY_BYTES)), Ok(()));
        assert!(attempt(|| host_copy(HOST_COPY_BYTES + 1)).is_err());
    }

    #[test]
    fn the_mode_is_reset_when_the_call_panics() {
        let r = std::panic::catch_unwind(|| attempt(|| panic!("boom")));
        assert!(r.is_err());
        assert!(!active());
    }
}
