//! The process-wide engine: one device, its memory pools, command stream and kernels.

use crate::device::{DeviceInfo, Gpu};
use crate::error::{Error, Result};
use crate::exec::Stream;
use crate::kernels::Kernels;
use crate::memory::Memory;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Everything that lives as long as the process.
pub struct Engine {
    pub gpu: Gpu,
    pub memory: Memory,
    pub stream: Stream,
    pub kernels: Kernels,
}

static ENGINE: OnceLock<std::result::Result<Engine, Error>> = OnceLock::new();

/// The engine, initialised on first use (the NIF's `dev_announce` tells the Elixir side
/// to print the chosen device, once per process).
/// A failed initialisation is remembered and returned to every caller. In non-blocking
/// mode an engine not yet initialised is [`Error::WouldBlock`].
pub fn engine() -> Result<&'static Engine> {
    if ENGINE.get().is_none() {
        crate::nonblocking::may_block("initialising the engine")?;
    }
    ENGINE
        .get_or_init(|| {
            let gpu = Gpu::open()?;
            let order = std::sync::Arc::new(crate::memory::StreamOrder::default());
            let memory = Memory::new(
                &gpu.device,
                gpu.info.host_visible_device_memory,
                order.clone(),
            )?;
            let stream = Stream::new(gpu.queue.clone(), order, gpu.info.device_type == "cpu")?;
            let kernels = Kernels::new(gpu.device.clone())?;
            Ok(Engine {
                gpu,
                memory,
                stream,
                kernels,
            })
        })
        .as_ref()
        .map_err(Clone::clone)
}

static ANNOUNCED: AtomicBool = AtomicBool::new(false);

/// True for the first caller only: the one that prints the device line.
pub fn first_announcement() -> bool {
    !ANNOUNCED.swap(true, Ordering::AcqRel)
}

impl Engine {
    /// The chosen device's description.
    pub fn info(&self) -> &DeviceInfo {
        &self.gpu.info
    }
}
