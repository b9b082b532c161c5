//! GPU time per kernel, for finding where a workload's time goes on the device.
//!
//! With `NX_VULKAN_PROFILE=1`, each batch gets a timestamp query pool: one timestamp when
//! the batch starts and one after each command, both at the bottom of the pipe (written
//! once every earlier command has finished). A command's time is the gap between its
//! timestamp and the one before: how much later the batch finished because of it, so the
//! times of a batch add up to its GPU time even where commands overlap. When a batch
//! retires, its times are added to totals by kernel name (`profile_take` reads and clears
//! them). Off, nothing is recorded and nothing is allocated.

use crate::error::Result;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use vulkano::command_buffer::RecordingCommandBuffer;
use vulkano::device::Device;
use vulkano::query::{QueryPool, QueryPoolCreateInfo, QueryResultFlags, QueryType};
use vulkano::sync::PipelineStage;

/// Whether `NX_VULKAN_PROFILE=1` asks for GPU timestamps.
pub fn wanted() -> bool {
    static WANTED: OnceLock<bool> = OnceLock::new();
    *WANTED.get_or_init(|| std::env::var("NX_VULKAN_PROFILE").is_ok_and(|v| v == "1"))
}

/// Names of pipelines by handle (registered when a pipeline is built), and the totals.
#[derive(Default)]
struct Book {
    names: HashMap<u64, String>,
    totals: HashMap<String, Total>,
}

/// Commands of one name: how many ran and their GPU time.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Total {
    pub count: u64,
    pub nanos: f64,
}

fn book() -> &'static Mutex<Book> {
    static BOOK: OnceLock<Mutex<Book>> = OnceLock::new();
    BOOK.get_or_init(Mutex::default)
}

/// Remembers the name of the pipeline with this raw handle (only while profiling).
pub fn name_pipeline(handle: u64, name: impl FnOnce() -> String) {
    if wanted() {
        let mut b = book().lock().unwrap_or_else(|e| e.into_inner());
        b.names.insert(handle, name());
    }
}

/// The totals by name since the last call, largest first; clears them.
pub fn take() -> Vec<(String, Total)> {
    let mut b = book().lock().unwrap_or_else(|e| e.into_inner());
    let mut all: Vec<(String, Total)> = b.totals.drain().collect();
    all.sort_by(|x, y| y.1.nanos.total_cmp(&x.1.nanos));
    all
}

/// The timestamps of one batch: slot 0 is its start, slot i + 1 follows command i.
pub struct BatchQueries {
    pool: Arc<QueryPool>,
    /// The pipeline handle of each command (0 for copies and updates).
    labels: Vec<u64>,
    /// Nanoseconds per timestamp tick.
    period: f64,
}

impl BatchQueries {
    /// A pool for `commands` commands, reset and started in `cb`; `None` where the
    /// device's queue cannot write timestamps.
    pub fn begin(
        device: &Arc<Device>,
        cb: &mut RecordingCommandBuffer,
        commands: usize,
    ) -> Result<Option<BatchQueries>> {
        let props = device.physical_device().properties();
        if !props.timestamp_compute_and_graphics {
            return Ok(None);
        }
        let slots = commands as u32 + 1;
        let pool = QueryPool::new(
            device.clone(),
            QueryPoolCreateInfo {
                query_count: slots,
                ..QueryPoolCreateInfo::query_type(QueryType::Timestamp)
            },
        )?;
        // SAFETY: a fresh pool, reset before its first write, used by this batch alone.
        unsafe {
            cb.reset_query_pool_unchecked(&pool, 0..slots);
            cb.write_timestamp_unchecked(&pool, 0, PipelineStage::BottomOfPipe);
        }
        Ok(Some(BatchQueries {
            pool,
            labels: Vec::with_capacity(commands),
            period: props.timestamp_period as f64,
        }))
    }

    /// Marks the end of the command just recorded in `cb` (`pipeline`: its raw handle, or
    /// 0). Commands past the pool's size go unmeasured.
    pub fn after(&mut self, cb: &mut RecordingCommandBuffer, pipeline: u64) {
        let slot = self.labels.len() as u32 + 1;
        if slot < self.pool.query_count() {
            // SAFETY: `slot` lies in the pool, which was reset at the batch's start.
            unsafe { cb.write_timestamp_unchecked(&self.pool, slot, PipelineStage::BottomOfPipe) };
            self.labels.push(pipeline);
        }
    }

    /// Adds the batch's times to the totals. Call once the batch has completed.
    pub fn collect(self) {
        let n = self.labels.len() + 1;
        let mut stamps = vec![0u64; n];
        let done = self
            .pool
            .get_results(0..n as u32, &mut stamps, QueryResultFlags::WAIT)
            .unwrap_or(false);
        if !done {
            return;
        }
        let mut b = book().lock().unwrap_or_else(|e| e.into_inner());
        for (i, &label) in self.labels.iter().enumerate() {
            let ticks = stamps[i + 1].saturating_sub(stamps[i]);
            let name = match label {
                0 => "copy or update".to_string(),
                h => b
                    .names
                    .get(&h)
                    .cloned()
                    .unwrap_or_else(|| format!("pipeline {h:#x}")),
            };
            let t = b.totals.entry(name).or_default();
            t.count += 1;
            t.nanos += ticks as f64 * self.period;
        }
    }
}
