//! The NIF boundary: Erlang terms in, engine calls, `{:ok, _}` / `{:error, {kind, msg}}`
//! out. No Nx semantics live here. Every NIF that touches the GPU runs on a dirty
//! scheduler: recording (which can build a pipeline or wait on back-pressure) on DirtyCpu,
//! host reads (which wait on fences) on DirtyIo.

mod convert;
mod device;
mod fused;
mod tensor;

rustler::atoms! {
    ok,
    error,
    nan,
    infinity,
    neg_infinity,
}

rustler::init!("Elixir.Nx.Vulkan.Native");
