//! Leapfrog chains in a caller's own kernel: the contract of the seed package's
//! `leapfrog_chain_synth_f64` and `leapfrog_chain_synth_batch_f64`, which eXMC's Vulkan
//! mode calls with the SPIR-V it compiles from its generated GLSL.
//!
//! The kernel runs `K` leapfrog steps of one chain per workgroup (one invocation per
//! coordinate) and writes every step's state. Its descriptor set 0 binds seven storage
//! buffers: 0 `q` and 1 `p` (f64 start position and momentum), 2 `extras` (the
//! observations, then the inverse-mass diagonal), and the outputs 3 `q_chain`,
//! 4 `p_chain`, 5 `grad_chain` (each `K x d` f64, row j = step j) and 6 `logp_chain`
//! (`K` f64). Its push constants begin with `u32 K, n_obs, d, n_instances` (the last is
//! 0 for a single chain) and the signed step size as an f64 at byte 16; the kernel's own
//! block decides how many bytes of the caller's push data it gets. A batch runs
//! `n_instances` chains, one workgroup each, its inputs and outputs concatenated.

use crate::dtype::DType;
use crate::engine::engine;
use crate::error::Error;
use crate::exec::Access;
use crate::kernels::foreign::ForeignPipeline;
use crate::tensor::Tensor;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The bytes of one chain's (or a batch's) outputs, row-major f64.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainOutput {
    pub q: Vec<u8>,
    pub p: Vec<u8>,
    pub grad: Vec<u8>,
    pub logp: Vec<u8>,
}

/// Why a chain did not run, in the contract's three kinds.
#[derive(Debug, Clone, PartialEq)]
pub enum ChainError {
    /// `q` and `p` differ in size.
    SizeMismatch(String),
    /// Inputs that do not describe a chain (zero steps, a push block too short or long,
    /// sizes that disagree with its `d`, `n_obs` or `n_instances`).
    BadInput(String),
    /// The device could not start.
    Init(Error),
    /// Reading the module, building its pipeline or running it failed.
    Dispatch(Error),
}

impl std::fmt::Display for ChainError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ChainError::SizeMismatch(m) | ChainError::BadInput(m) => write!(f, "{m}"),
            ChainError::Init(e) | ChainError::Dispatch(e) => write!(f, "{e}"),
        }
    }
}

/// Bytes of the push header every chain kernel reads: four u32 and the f64 step size.
pub const PUSH_HEADER: usize = 24;
/// The most push data a caller may pass (Vulkan's guaranteed minimum).
pub const MAX_PUSH: usize = 128;

fn u32_at(push: &[u8], at: usize) -> usize {
    u32::from_le_bytes([push[at], push[at + 1], push[at + 2], push[at + 3]]) as usize
}

/// The sizes a chain's push header announces, checked against its inputs.
struct Dims {
    d: usize,
    instances: usize,
}

fn check(
    q: &[u8],
    p: &[u8],
    extras: &[u8],
    push: &[u8],
    k: usize,
    batched: bool,
) -> Result<Dims, ChainError> {
    if q.len() != p.len() {
        return Err(ChainError::SizeMismatch(format!(
            "q has {} bytes and p {}",
            q.len(),
            p.len()
        )));
    }
    let bad = |m: String| Err(ChainError::BadInput(m));
    if k == 0 || k >= u32::MAX as usize {
        return bad(format!("a chain of {k} steps (1 to 2^32 - 2)"));
    }
    if push.len() < PUSH_HEADER || push.len() > MAX_PUSH {
        return bad(format!(
            "the push block has {} bytes; it needs {PUSH_HEADER} to {MAX_PUSH}",
            push.len()
        ));
    }
    let (n_obs, d) = (u32_at(push, 4), u32_at(push, 8));
    let instances = if batched { u32_at(push, 12) } else { 1 };
    if d == 0 || instances == 0 {
        return bad(format!(
            "d = {d} and {instances} instances in the push block"
        ));
    }
    if q.len() != instances * d * 8 {
        return bad(format!(
            "q has {} bytes, not {instances} x d = {d} f64",
            q.len()
        ));
    }
    if extras.len() < instances * (n_obs + d) * 8 {
        return bad(format!(
            "extras has {} bytes, less than {instances} x (n_obs = {n_obs} + d = {d}) f64",
            extras.len()
        ));
    }
    // Every output (one more step than asked, see `leapfrog_chain`) must be addressable.
    let rows = instances
        .checked_mul(k + 1)
        .and_then(|r| r.checked_mul(d))
        .and_then(|r| r.checked_mul(8));
    if rows.is_none_or(|b| b > isize::MAX as usize) {
        return bad(format!(
            "{instances} x {k} steps x d = {d} f64 do not fit in memory"
        ));
    }
    Ok(Dims { d, instances })
}

/// Runs the chain kernel `spirv` (the bytes of a SPIR-V module) for `k` steps from `q`,
/// `p` with `extras` and `push`, as described in the module doc. `batched` reads the
/// number of chains from the push header (`n_instances`); otherwise it is one.
///
/// Row `j` of every output is the state after step `j + 1`, its log density included.
/// Kernels differ there: eXMC's generated ones store each step's log density before
/// the step (at the row's previous position). The first call of a kernel tells which it
/// does by a zero-length probe step, and the chain runs one step more when needed, so the
/// rows come out right either way.
pub fn leapfrog_chain(
    q: &[u8],
    p: &[u8],
    extras: &[u8],
    push: &[u8],
    k: usize,
    spirv: &[u8],
    batched: bool,
) -> Result<ChainOutput, ChainError> {
    let dims = check(q, p, extras, push, k, batched)?;
    let e = engine().map_err(ChainError::Init)?;
    let kernel = chain_kernel(e, spirv).map_err(ChainError::Dispatch)?;
    let key = kernel.key;
    let known = conventions().get(&key).copied();
    let run = |steps: usize, push: &[u8]| {
        dispatch(
            e,
            &kernel,
            q,
            p,
            extras,
            &with_steps(push, steps),
            steps,
            &dims,
        )
        .map_err(ChainError::Dispatch)
    };
    let out = match known {
        Some(Convention::LogpAfterStep) => return run(k, push),
        _ => run(k + 1, push)?,
    };
    let convention = match known {
        Some(c) => c,
        None => {
            let (c, decided) = probe_convention(&out, q, p, push, k, &dims, |q, p, push| {
                dispatch(e, &kernel, q, p, extras, &with_steps(push, 1), 1, &dims)
                    .map_err(ChainError::Dispatch)
            })?;
            if decided {
                conventions().insert(key, c);
            }
            c
        }
    };
    Ok(rows(&out, k, &dims, convention))
}

/// Tells a kernel's convention from a chain `out` it ran for `k + 1` steps from `q`, `p`,
/// with zero-length probe steps (`probe(q, p, push)`), whose log density is their start's
/// whichever the convention. Row 0's value is the start's (before) or the first step's
/// (after); when the two are equal, a probe from the first step tells them apart. Returns
/// the convention and whether it was decided (an undecided one is not remembered, and the
/// rows are then read as stored after the step).
fn probe_convention(
    out: &ChainOutput,
    q: &[u8],
    p: &[u8],
    push: &[u8],
    k: usize,
    dims: &Dims,
    probe: impl Fn(&[u8], &[u8], &[u8]) -> Result<ChainOutput, ChainError>,
) -> Result<(Convention, bool), ChainError> {
    let mut still = push.to_vec();
    still[16..24].copy_from_slice(&0f64.to_le_bytes());
    let (n, d) = (dims.instances, dims.d * 8);
    let row0 = |v: &[u8], i: usize| v[i * (k + 1) * d..][..d].to_vec();
    let logp0 = |i: usize| out.logp[i * (k + 1) * 8..][..8].to_vec();
    let start = probe(q, p, &still)?;
    if (0..n).any(|i| logp0(i) != start.logp[i * 8..][..8]) {
        return Ok((Convention::LogpAfterStep, true));
    }
    let (q1, p1): (Vec<u8>, Vec<u8>) = (
        (0..n).flat_map(|i| row0(&out.q, i)).collect(),
        (0..n).flat_map(|i| row0(&out.p, i)).collect(),
    );
    let first = probe(&q1, &p1, &still)?;
    if (0..n).any(|i| logp0(i) != first.logp[i * 8..][..8]) {
        return Ok((Convention::LogpBeforeStep, true));
    }
    Ok((Convention::LogpAfterStep, false))
}

/// Where a kernel stores row `j`'s log density.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Convention {
    /// At `logp_chain[j]`, after step `j + 1` (the contract's rows).
    LogpAfterStep,
    /// At `logp_chain[j]`, before step `j + 1` (eXMC's generated kernels): row `j`'s
    /// value is at `j + 1`.
    LogpBeforeStep,
}

fn conventions() -> std::sync::MutexGuard<'static, HashMap<[u8; 32], Convention>> {
    static SEEN: OnceLock<Mutex<HashMap<[u8; 32], Convention>>> = OnceLock::new();
    SEEN.get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// `push` with its step count (the header's first u32) set to `steps`.
fn with_steps(push: &[u8], steps: usize) -> Vec<u8> {
    let mut v = push.to_vec();
    v[..4].copy_from_slice(&(steps as u32).to_le_bytes());
    v
}

/// The first `k` rows of each chain of `out` (which ran `k + 1` steps), the log density of
/// each row taken where `convention` puts it.
fn rows(out: &ChainOutput, k: usize, dims: &Dims, convention: Convention) -> ChainOutput {
    let (d, n) = (dims.d * 8, dims.instances);
    let mut r = ChainOutput {
        q: Vec::with_capacity(n * k * d),
        p: Vec::with_capacity(n * k * d),
        grad: Vec::with_capacity(n * k * d),
        logp: Vec::with_capacity(n * k * 8),
    };
    let shift = usize::from(convention == Convention::LogpBeforeStep);
    for i in 0..n {
        let rows = i * (k + 1) * d..i * (k + 1) * d + k * d;
        r.q.extend_from_slice(&out.q[rows.clone()]);
        r.p.extend_from_slice(&out.p[rows.clone()]);
        r.grad.extend_from_slice(&out.grad[rows]);
        let at = (i * (k + 1) + shift) * 8;
        r.logp.extend_from_slice(&out.logp[at..at + k * 8]);
    }
    r
}

/// The pipeline of a chain kernel, checked against the contract's bindings.
fn chain_kernel(
    e: &'static crate::engine::Engine,
    spirv: &[u8],
) -> crate::error::Result<Arc<ForeignPipeline>> {
    if !e.gpu.device.enabled_features().shader_float64 {
        return Err(Error::Unsupported(format!(
            "the f64 leapfrog chains need shaderFloat64, which {} lacks",
            e.info().name
        )));
    }
    let words = crate::kernels::foreign::words(spirv)?;
    // SAFETY: the module is the caller's; vulkano reflects it, and its pipeline binds only
    // the buffers `dispatch` allocates, sized as the contract says.
    let kernel = unsafe { e.kernels.foreign.pipeline(&words) }?;
    if kernel.bindings.iter().any(|&b| b > 6) {
        return Err(Error::InvalidArgument(format!(
            "a chain kernel binds storage buffers 0-6 of set 0 (those it uses); this one binds {:?}",
            kernel.bindings
        )));
    }
    Ok(kernel)
}

/// One dispatch of `kernel` for `k` steps; the outputs' bytes as the kernel wrote them.
#[allow(clippy::too_many_arguments)]
fn dispatch(
    e: &'static crate::engine::Engine,
    kernel: &ForeignPipeline,
    q: &[u8],
    p: &[u8],
    extras: &[u8],
    push: &[u8],
    k: usize,
    &Dims { d, instances }: &Dims,
) -> crate::error::Result<ChainOutput> {
    let steps = instances * k * d;
    let inputs = [q, p, extras]
        .into_iter()
        .map(|b| Tensor::from_bytes(&[b.len()], DType::U8, b))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let outputs = [steps * 8, steps * 8, steps * 8, instances * k * 8]
        .into_iter()
        .map(|n| Tensor::empty(&[n], DType::U8))
        .collect::<crate::error::Result<Vec<_>>>()?;
    // Each buffer bound at its exact size (pooled blocks are larger), at the bindings the
    // module uses (a module that never touches one is reflected without it).
    let all: Vec<&Tensor> = inputs.iter().chain(&outputs).collect();
    let buffers: Vec<_> = kernel
        .bindings
        .iter()
        .map(|&b| {
            let t = all[b as usize];
            t.block.buffer().clone().slice(0..t.nbytes())
        })
        .collect();
    let set = e.kernels.foreign.set(kernel, &buffers)?;
    let mut push_data = [0u8; MAX_PUSH];
    push_data[..push.len()].copy_from_slice(push);
    let accesses: Vec<Access> = inputs
        .iter()
        .map(|t| Access::Read(&t.block))
        .chain(outputs.iter().map(|t| Access::Write(&t.block)))
        .collect();
    e.stream.dispatch_with_set(
        &kernel.pipeline,
        &kernel.layout,
        set,
        &push_data[..(kernel.push_bytes as usize).min(MAX_PUSH)],
        [instances as u32, 1, 1],
        &accesses,
    )?;
    let mut read = outputs.iter().map(Tensor::to_bytes);
    let mut next = || read.next().expect("four outputs");
    Ok(ChainOutput {
        q: next()?,
        p: next()?,
        grad: next()?,
        logp: next()?,
    })
}
