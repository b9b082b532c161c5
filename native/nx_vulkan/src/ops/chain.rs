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
use crate::tensor::Tensor;

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
    if k == 0 {
        return bad("a chain of 0 steps".into());
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
    Ok(Dims { d, instances })
}

/// Runs the chain kernel `spirv` (the bytes of a SPIR-V module) for `k` steps from `q`,
/// `p` with `extras` and `push`, as described in the module doc. `batched` reads the
/// number of chains from the push header (`n_instances`); otherwise it is one.
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
    run(e, q, p, extras, push, k, spirv, dims).map_err(ChainError::Dispatch)
}

#[allow(clippy::too_many_arguments)]
fn run(
    e: &'static crate::engine::Engine,
    q: &[u8],
    p: &[u8],
    extras: &[u8],
    push: &[u8],
    k: usize,
    spirv: &[u8],
    Dims { d, instances }: Dims,
) -> crate::error::Result<ChainOutput> {
    if !e.gpu.device.enabled_features().shader_float64 {
        return Err(Error::Unsupported(format!(
            "the f64 leapfrog chains need shaderFloat64, which {} lacks",
            e.info().name
        )));
    }
    let words = crate::kernels::foreign::words(spirv)?;
    // SAFETY: the module is the caller's; vulkano reflects it, and its pipeline binds only
    // the buffers allocated here, sized as the contract says.
    let kernel = unsafe { e.kernels.foreign.pipeline(&words) }?;
    if kernel.bindings != [0, 1, 2, 3, 4, 5, 6] {
        return Err(Error::InvalidArgument(format!(
            "a chain kernel binds storage buffers 0-6 of set 0; this one binds {:?}",
            kernel.bindings
        )));
    }
    let steps = instances * k * d;
    let inputs = [q, p, extras]
        .into_iter()
        .map(|b| Tensor::from_bytes(&[b.len()], DType::U8, b))
        .collect::<crate::error::Result<Vec<_>>>()?;
    let outputs = [steps * 8, steps * 8, steps * 8, instances * k * 8]
        .into_iter()
        .map(|n| Tensor::empty(&[n], DType::U8))
        .collect::<crate::error::Result<Vec<_>>>()?;
    // Each buffer bound at its exact size: pooled blocks are larger.
    let buffers: Vec<_> = inputs
        .iter()
        .chain(&outputs)
        .map(|t| t.block.buffer().clone().slice(0..t.nbytes()))
        .collect();
    let set = e.kernels.foreign.set(&kernel, &buffers)?;
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
