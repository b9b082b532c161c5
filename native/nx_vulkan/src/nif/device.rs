//! Device NIFs: initialisation, description and counters.

use super::convert::{wrap, NifOut};
use crate::engine::engine;
use rustler::{Encoder, Env, Term};

/// Opens the device (first call only) and returns its name.
#[rustler::nif(schedule = "DirtyIo")]
fn dev_init() -> NifOut<String> {
    wrap("init", engine().map(|e| e.info().name.clone()))
}

/// Opens the device and says whether this is the first call in the process: the caller
/// that gets `true` prints the device line.
#[rustler::nif(schedule = "DirtyIo")]
fn dev_announce() -> NifOut<bool> {
    wrap("init", engine())?;
    Ok(crate::engine::first_announcement())
}

/// The device description as a map with atom keys.
#[rustler::nif(schedule = "DirtyIo")]
fn dev_info(env: Env<'_>) -> NifOut<Term<'_>> {
    let e = wrap("device_info", engine())?;
    let i = e.info();
    let heaps: Vec<Term> = i
        .heaps
        .iter()
        .map(|(size, local)| {
            atom_map(
                env,
                &[
                    ("size", size.encode(env)),
                    ("device_local", local.encode(env)),
                ],
            )
        })
        .collect();
    let pairs: Vec<(&str, Term)> = vec![
        ("index", i.index.encode(env)),
        ("name", i.name.encode(env)),
        ("type", i.device_type.encode(env)),
        ("driver", i.driver.encode(env)),
        ("loader", i.loader.encode(env)),
        ("disabled_features", i.disabled_features.encode(env)),
        ("api_version", i.api_version.encode(env)),
        ("heaps", heaps.encode(env)),
        ("subgroup_size", i.subgroup_size.encode(env)),
        ("subgroup_arithmetic", i.subgroup_arithmetic.encode(env)),
        (
            "max_workgroup_count",
            i.max_workgroup_count.to_vec().encode(env),
        ),
        ("max_shared_memory", i.max_shared_memory.encode(env)),
        (
            "max_storage_buffer_range",
            i.max_storage_buffer_range.encode(env),
        ),
        ("max_allocation", i.max_allocation.encode(env)),
        ("f16", i.f16.encode(env)),
        ("f64", i.f64.encode(env)),
        ("int64", i.int64.encode(env)),
        ("int16", i.int16.encode(env)),
        ("int8", i.int8.encode(env)),
        ("storage_16bit", i.storage16.encode(env)),
        ("cooperative_matrix", i.cooperative_matrix.encode(env)),
        (
            "cooperative_matrix_f16",
            i.cooperative_matrix_f16.encode(env),
        ),
        (
            "cooperative_matrix_bf16",
            i.cooperative_matrix_bf16.encode(env),
        ),
        (
            "cooperative_matrix_shapes",
            i.cooperative_matrix_shapes.encode(env),
        ),
        ("denorm_preserve_f32", i.denorm_preserve_f32.encode(env)),
        (
            "host_visible_device_memory",
            i.host_visible_device_memory.encode(env),
        ),
        ("device_uuid", i.device_uuid.encode(env)),
        ("driver_version", i.driver_version.encode(env)),
        (
            "pipeline_cache_uuid",
            crate::device::hex(&i.pipeline_cache_uuid).encode(env),
        ),
    ];
    Ok(atom_map(env, &pairs))
}

/// The pipeline cache in its persisted form (`kernels::cache`).
#[rustler::nif(schedule = "DirtyIo")]
fn dev_pipeline_cache<'a>(env: Env<'a>) -> NifOut<rustler::Binary<'a>> {
    let e = wrap("pipeline_cache", engine())?;
    let data = wrap("pipeline_cache", e.kernels.persisted_cache())?;
    let mut bin = rustler::OwnedBinary::new(data.len());
    bin.as_mut_slice().copy_from_slice(&data);
    Ok(bin.release(env))
}

/// Merges a persisted pipeline cache into the engine's; `{:ok, driver_bytes}`, or an
/// `:invalid_argument` error saying why the data was refused (not ours, corrupt, foreign).
#[rustler::nif(schedule = "DirtyIo")]
fn dev_load_pipeline_cache(bytes: rustler::Binary<'_>) -> NifOut<usize> {
    let e = wrap("load_pipeline_cache", engine())?;
    wrap(
        "load_pipeline_cache",
        e.kernels.load_cache(bytes.as_slice(), e.info()),
    )
}

/// Memory and execution counters (dirty: the first call may open the device).
#[rustler::nif(schedule = "DirtyIo")]
fn dev_stats(env: Env<'_>) -> NifOut<Term<'_>> {
    let e = wrap("stats", engine())?;
    let m = e.memory.stats();
    let x = e.stream.stats();
    let (calls, runs) = super::program::counts();
    let (retries, collects) = super::twin::retries();
    let (generated, refused) = crate::codegen::counts();
    let pairs: Vec<(&str, Term)> = vec![
        ("live_bytes", m.live_bytes.encode(env)),
        ("pooled_bytes", m.pooled_bytes.encode(env)),
        ("buffers_created", m.created.encode(env)),
        ("buffers_reused", m.reused.encode(env)),
        ("dispatches", x.dispatches.encode(env)),
        ("updates", x.updates.encode(env)),
        ("barriers", x.barriers.encode(env)),
        ("submits", x.submits.encode(env)),
        ("waits", x.waits.encode(env)),
        ("pipelines", e.kernels.built().encode(env)),
        ("native_calls", calls.encode(env)),
        ("program_runs", runs.encode(env)),
        (
            "launch_list_runs",
            crate::launch_list::replays().encode(env),
        ),
        (
            "recorded_list_runs",
            crate::launch_list::recorded_runs().encode(env),
        ),
        ("dirty_retries", retries.encode(env)),
        ("collects", collects.encode(env)),
        ("spares_created", m.spares.encode(env)),
        ("generated_kernels", generated.encode(env)),
        ("generated_refused", refused.encode(env)),
    ];
    Ok(atom_map(env, &pairs))
}

/// GPU time by kernel since the last call, with `NX_VULKAN_PROFILE=1`: waits for the
/// recorded work, then gives `[{name, count, microseconds}]`, largest first, and clears.
#[rustler::nif(schedule = "DirtyIo")]
fn dev_profile() -> NifOut<Vec<(String, u64, f64)>> {
    let e = wrap("profile", engine())?;
    wrap("profile", e.stream.synchronize())?;
    Ok(crate::exec_profile::take()
        .into_iter()
        .map(|(name, t)| (name, t.count, t.nanos / 1000.0))
        .collect())
}

/// Waits for all recorded GPU work (benchmarks use it to time without a download).
#[rustler::nif(schedule = "DirtyIo")]
fn dev_synchronize() -> NifOut<rustler::Atom> {
    let e = wrap("synchronize", engine())?;
    wrap("synchronize", e.stream.synchronize())?;
    Ok(super::ok())
}

fn atom_map<'a>(env: Env<'a>, pairs: &[(&str, Term<'a>)]) -> Term<'a> {
    let mut map = rustler::types::map::map_new(env);
    for (k, v) in pairs {
        let key = rustler::Atom::from_str(env, k)
            .map(|a| a.encode(env))
            .unwrap_or_else(|_| k.encode(env));
        map = map.map_put(key, *v).unwrap_or(map);
    }
    map
}
