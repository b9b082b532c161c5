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

pub use ir::{Group, Node, View};

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

/// The pipeline of `group`'s kernel, generated and registered on first use.
fn pipeline(group: &Group) -> Result<Arc<ComputePipeline>> {
    static NAMES: OnceLock<Mutex<HashMap<Group, String>>> = OnceLock::new();
    let names = NAMES.get_or_init(Mutex::default);
    let known = names
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(group)
        .cloned();
    let name = match known {
        Some(name) => name,
        None => {
            crate::nonblocking::may_block("generating a kernel")?;
            let words = spirv(group)?;
            let name = format!("Generated#{:08x}", fnv(&words));
            // SAFETY: the library's SPIR-V (compiled by shaderc for this engine's Vulkan
            // 1.2 target) plus a `main` that only loads, calls and stores through it;
            // tests/codegen.rs runs spirv-val on such modules.
            unsafe { engine()?.kernels.register_spirv(&name, &words)? };
            GENERATED.fetch_add(1, Ordering::Relaxed);
            names
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(group.clone(), name.clone());
            name
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
/// of the domain's shape, in order. One launch.
pub fn run(group: &Group, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    group.check()?;
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
    let outputs = group
        .outputs
        .iter()
        .map(|&o| Tensor::empty(&group.shape, group.dtype(o)))
        .collect::<Result<Vec<_>>>()?;
    let n = numel(&group.shape)?;
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
    if low < 0 || high >= len {
        return Err(crate::invalid!(
            "input {k} of a generated kernel reads elements {low}..={high} of a tensor of \
             shape {:?} ({len} elements)",
            t.shape
        ));
    }
    Ok(())
}
