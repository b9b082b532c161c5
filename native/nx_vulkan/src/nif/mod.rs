//! The NIF boundary: Erlang terms in, engine calls, `{:ok, _}` / `{:error, {kind, msg}}`
//! out. No Nx semantics live here. Every NIF that can block runs on a dirty scheduler:
//! recording (which can build a pipeline or wait on back-pressure) on DirtyCpu, host reads
//! (which wait on fences) on DirtyIo. The hot ones are twins (see `twin`): first tried on
//! the caller's normal scheduler in the engine's non-blocking mode, then on a dirty one.

mod chain;
mod convert;
mod device;
mod fused;
mod generated;
pub(super) mod program;
mod tensor;
mod twin;

rustler::atoms! {
    ok,
    error,
    nan,
    infinity,
    neg_infinity,
}

rustler::init!("Elixir.Nx.Vulkan.Native");
