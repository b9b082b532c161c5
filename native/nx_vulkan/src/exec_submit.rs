//! When the stream submits its open batch before the host waits or the batch is full.
//!
//! A submission costs the host a few microseconds (~4 µs on the H200), so commands
//! collect in the open batch; but a GPU with nothing submitted waits for the host. Three
//! policies, chosen by `NX_VULKAN_EAGER_SUBMIT`:
//!
//! - `0` (**never**; the default on CPU devices such as lavapipe, whose "GPU" shares the
//!   host's cores and gains nothing from overlap): only a host wait or a full batch
//!   submits.
//! - `1` (**when idle**; the default on GPUs): a command is submitted at once when every
//!   submitted batch has finished, so the GPU works while the host records the rest, as a
//!   CUDA stream does. When the GPU is busy, commands collect; if it finishes before the
//!   next command is recorded, it idles until then.
//! - `2` (**keep one queued**): as `1`, and also when exactly one submitted batch is still
//!   running and the open batch has collected commands for at least [`QUEUE_AFTER`]: the
//!   GPU finds the next batch queued when the running one ends. For host-paced loops of
//!   long kernels (softmax over 16M elements from Elixir) the GPU then never waits for the
//!   host; it costs a submission per [`QUEUE_AFTER`] of recording at most.

use std::time::Duration;

/// How long the open batch collects commands, while one batch runs, before policy `2`
/// queues it behind that one.
pub const QUEUE_AFTER: Duration = Duration::from_micros(20);

/// A submission policy (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Submission {
    Never,
    WhenIdle,
    KeepOneQueued,
}

impl Submission {
    /// The policy `NX_VULKAN_EAGER_SUBMIT` names, or the default for the device.
    pub fn from_env(device_is_cpu: bool) -> Submission {
        match std::env::var("NX_VULKAN_EAGER_SUBMIT").as_deref() {
            Ok("0") => Submission::Never,
            Ok("1") => Submission::WhenIdle,
            Ok("2") => Submission::KeepOneQueued,
            _ if device_is_cpu => Submission::Never,
            _ => Submission::WhenIdle,
        }
    }

    /// Whether to submit the open batch now, with `running` submitted batches not yet
    /// finished and the open batch collecting commands for `open_for`.
    pub fn submit_now(self, running: usize, open_for: Duration) -> bool {
        match self {
            Submission::Never => false,
            Submission::WhenIdle => running == 0,
            Submission::KeepOneQueued => running == 0 || (running == 1 && open_for >= QUEUE_AFTER),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let (short, long) = (Duration::ZERO, QUEUE_AFTER);
        assert!(!Submission::Never.submit_now(0, long));
        assert!(Submission::WhenIdle.submit_now(0, short));
        assert!(!Submission::WhenIdle.submit_now(1, long));
        assert!(Submission::KeepOneQueued.submit_now(0, short));
        assert!(!Submission::KeepOneQueued.submit_now(1, short));
        assert!(Submission::KeepOneQueued.submit_now(1, long));
        assert!(!Submission::KeepOneQueued.submit_now(2, long));
    }
}
