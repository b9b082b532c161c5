//! Generated kernels: SPIR-V built in-process (rspirv) for a group of element-wise ops,
//! so that a chain of them is one launch that keeps its intermediate values in registers.
//!
//! A kernel is its compute class's function library (`shaders/codegen/lib.comp`, the
//! static kernels' own loads, stores and ops, compiled unoptimised and shipped) with a
//! generated `main` (`emit.rs`): each op runs the code its unfused kernel runs, so a
//! group computes the bytes the ops give one by one ([`ir::Group::check`] says which
//! groups can). Pipelines are built once per group (the group, sizes included, is the
//! key) and cached by the driver's pipeline cache like every other kernel.

mod emit;
pub mod ir;
mod library;
mod math;
mod reduction;
mod specialize;

pub use ir::{Group, Node, View};

use crate::dtype::Compute;
use crate::engine::engine;
use crate::error::Result;
use crate::exec::Access;
use crate::kernels::{KernelKey, Source};
use crate::ops::{grid, PushWords};
use crate::tensor::{numel, Tensor};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use vulkano::pipeline::ComputePipeline;

/// The SPIR-V words of `group`'s kernel for the current device, after
/// [`Group::check`]: what `run` registers (tests validate it with spirv-val).
pub fn spirv(group: &Group) -> Result<Vec<u32>> {
    let class = group.check()?;
    let info = engine()?.info();
    // As the static kernels (`Kernels::check_features`): a device without 64-bit types
    // answers `Unsupported`, and the Compiler runs the ops one by one.
    let wide = match class {
        Compute::F64 => !(info.f64 && info.int64),
        Compute::I64 | Compute::U64 => !info.int64,
        _ => false,
    };
    if wide {
        return Err(crate::unsupported!(
            "a generated kernel computing in {class:?} needs 64-bit types, which {} lacks",
            info.name
        ));
    }
    let library = library::library(library::suffix(class, info.f64)?)?;
    let mut words = emit::emit(group, class, &library)?;
    // As every static kernel (kernels/spirv.rs `load`).
    if info.denorm_preserve_f32 {
        crate::kernels::spirv::preserve_f32_denormals(&mut words);
    }
    Ok(words)
}

/// Kernels generated (one per distinct group) and groups refused by the NIF.
static GENERATED: AtomicU64 = AtomicU64::new(0);
static REFUSED: AtomicU64 = AtomicU64::new(0);

/// Notes a group that [`Group::check`] refused where a caller asked for it (the
/// Compiler then runs its ops one by one).
pub fn note_refused() {
    REFUSED.fetch_add(1, Ordering::Relaxed);
}

/// The kernels generated and the groups refused so far, for `Nx.Vulkan.stats/0`.
pub fn counts() -> (u64, u64) {
    (
        GENERATED.load(Ordering::Relaxed),
        REFUSED.load(Ordering::Relaxed),
    )
}

/// The pipeline of `group`'s kernel, generated and registered on first use. The map's
/// lock is held while a kernel is generated (about a millisecond; the driver builds the
/// pipeline after, in `get_key`), so two threads asking for one group generate it once.
fn pipeline(group: &Group) -> Result<Arc<ComputePipeline>> {
    static NAMES: OnceLock<Mutex<HashMap<Group, String>>> = OnceLock::new();
    let name = {
        let mut names = NAMES
            .get_or_init(Mutex::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let key = group.kernel_key();
        match names.get(&key) {
            Some(name) => name.clone(),
            None => {
                crate::nonblocking::may_block("generating a kernel")?;
                let words = spirv(&key)?;
                // Numbered, so that no two groups share a name (and a pipeline).
                let n = GENERATED.fetch_add(1, Ordering::Relaxed);
                let name = format!("Generated#{n}:{:08x}", fnv(&words));
                // SAFETY: the library's SPIR-V (compiled by shaderc for this engine's
                // Vulkan 1.2 target) plus a `main` that only loads, calls and stores
                // through it; tests/codegen.rs runs spirv-val on such modules.
                unsafe { engine()?.kernels.register_spirv(&name, &words)? };
                names.insert(key, name.clone());
                name
            }
        }
    };
    engine()?.kernels.get_key(&KernelKey {
        source: Source::Runtime(name),
        spec: [0, 0],
    })
}

/// FNV-1a over the words: a short, stable name for profiles.
fn fnv(words: &[u32]) -> u32 {
    words.iter().fold(0x811c_9dc5u32, |h, &w| {
        w.to_le_bytes()
            .iter()
            .fold(h, |h, &b| (h ^ b as u32).wrapping_mul(0x0100_0193))
    })
}

/// Runs `group` on `inputs` (one per view, of its type): its outputs, contiguous tensors
/// of the domain's shape (or the kept axes' shape, `Group::output_shape`), in order. One
/// launch.
pub fn run(group: &Group, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    let class = group.check()?;
    if inputs.len() != group.inputs.len() {
        return Err(crate::invalid!(
            "a generated kernel of {} inputs was given {}",
            group.inputs.len(),
            inputs.len()
        ));
    }
    for (k, (view, t)) in group.inputs.iter().zip(inputs).enumerate() {
        check_view(k, view, &group.shape, t)?;
    }
    let outputs = (0..group.outputs.len())
        .map(|j| Tensor::empty(&group.output_shape(j), group.dtype(group.outputs[j])))
        .collect::<Result<Vec<_>>>()?;
    // One invocation per element, or per output point of a reduction.
    let n = numel(&group.kept_shape())?;
    if n == 0 {
        return Ok(outputs);
    }
    let pipeline = pipeline(group)?;
    let mut push = PushWords::new();
    let mut accesses = Vec::with_capacity(inputs.len() + outputs.len());
    for t in inputs {
        push = push.addr(&t.block);
        accesses.push(Access::Read(&t.block));
    }
    for t in &outputs {
        push = push.addr(&t.block);
        accesses.push(Access::Write(&t.block));
    }
    // lib.comp's block: `addr[MAX_BUFFERS]`, `n` (unused: the count is in the module),
    // then the constants' words.
    let unused = ir::MAX_BUFFERS - inputs.len() - outputs.len();
    push = push
        .array_n(std::iter::empty(), 2 * unused)
        .u(n as u32)
        .array_n(group.constant_words(class), ir::MAX_CONSTANT_WORDS);
    let e = engine()?;
    e.stream.dispatch(
        &pipeline,
        e.kernels.layout(),
        push.words(),
        push.addr_words(),
        grid(n as u64),
        &accesses,
    )?;
    Ok(outputs)
}

/// Checks that input `k`'s view reads only elements of `t`, which has its type.
fn check_view(k: usize, view: &View, shape: &[usize], t: &Tensor) -> Result<()> {
    if t.dtype != view.dtype {
        return Err(crate::invalid!(
            "input {k} of a generated kernel is {}, the kernel reads {}",
            t.dtype.name(),
            view.dtype.name()
        ));
    }
    if numel(shape)? == 0 {
        return Ok(());
    }
    let (mut low, mut high) = (view.offset as i128, view.offset as i128);
    for (&d, &s) in shape.iter().zip(&view.strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 {
            low += reach;
        } else {
            high += reach;
        }
    }
    let len = numel(&t.shape)? as i128;
    // The kernel's index math is 32-bit (as the static kernels'): offsets below 2^32,
    // strides within i32.
    let wide_stride = view.strides.iter().any(|&s| i32::try_from(s).is_err());
    if wide_stride || high > u32::MAX as i128 {
        return Err(crate::unsupported!(
            "input {k} of a generated kernel reaches element {high} or has a stride past \
             32 bits ({:?})",
            view.strides
        ));
    }
    if low < 0 || high >= len {
        return Err(crate::invalid!(
            "input {k} of a generated kernel reads elements {low}..={high} of a tensor of \
             shape {:?} ({len} elements)",
            t.shape
        ));
    }
    Ok(())
}
