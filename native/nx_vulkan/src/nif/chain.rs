//! The leapfrog-chain NIF (`ops::chain`), in the seed package's term contract, which eXMC
//! decodes: `{:ok, {q, p, grad, logp}}` binaries, `{:error, :size_mismatch}`,
//! `{:error, :bad_input}`, `{:error, :vulkan_init_failed, message}` or
//! `{:error, :dispatch_failed, message}`.

use crate::ops::chain::{leapfrog_chain, ChainError};
use rustler::{Binary, Encoder, Env, OwnedBinary, Term};

rustler::atoms! {
    size_mismatch,
    bad_input,
    vulkan_init_failed,
    dispatch_failed,
}

fn binary<'a>(env: Env<'a>, bytes: &[u8]) -> Term<'a> {
    let mut bin = OwnedBinary::new(bytes.len());
    bin.as_mut_slice().copy_from_slice(bytes);
    bin.release(env).encode(env)
}

/// Runs `k` leapfrog steps of the chain kernel in the SPIR-V file `spv_path` (one chain,
/// or with `batched` the push header's `n_instances`). Dirty: it reads a file, may build
/// a pipeline and waits for the GPU.
#[rustler::nif(schedule = "DirtyIo")]
#[allow(clippy::too_many_arguments)]
fn chain_leapfrog_f64<'a>(
    env: Env<'a>,
    q: Binary<'a>,
    p: Binary<'a>,
    extras: Binary<'a>,
    push: Binary<'a>,
    k: u64,
    spv_path: String,
    batched: bool,
) -> Term<'a> {
    let error = super::error();
    let result = std::fs::read(&spv_path)
        .map_err(|e| {
            ChainError::Dispatch(crate::error::Error::InvalidArgument(format!(
                "read spv {spv_path}: {e}"
            )))
        })
        .and_then(|spirv| {
            leapfrog_chain(
                q.as_slice(),
                p.as_slice(),
                extras.as_slice(),
                push.as_slice(),
                k as usize,
                &spirv,
                batched,
            )
        });
    match result {
        Ok(out) => {
            let bins = (
                binary(env, &out.q),
                binary(env, &out.p),
                binary(env, &out.grad),
                binary(env, &out.logp),
            );
            (super::ok(), bins).encode(env)
        }
        Err(ChainError::SizeMismatch(_)) => (error, size_mismatch()).encode(env),
        Err(ChainError::BadInput(_)) => (error, bad_input()).encode(env),
        Err(e @ ChainError::Init(_)) => (error, vulkan_init_failed(), e.to_string()).encode(env),
        Err(e @ ChainError::Dispatch(_)) => (error, dispatch_failed(), e.to_string()).encode(env),
    }
}
