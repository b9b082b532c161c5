//! Nx.Vulkan's engine: Nx tensor semantics on Vulkan compute.
//!
//! The engine is usable from Rust alone ([`engine()`], [`Tensor`], [`ops`]); the `nif`
//! module is the thin Erlang boundary that the Elixir backend calls.

pub mod codegen;
pub mod device;
pub mod device_create;
pub mod dtype;
pub mod engine;
pub mod error;
pub mod exec;
mod exec_hazards;
mod exec_pool;
pub mod exec_profile;
mod exec_progress;
mod exec_submit;
pub mod kernels;
pub mod launch_list;
pub mod loader;
pub mod memory;
mod memory_limit;
pub mod nonblocking;
pub mod ops;
pub mod program;
pub mod sub_byte;
pub mod tensor;

// Not in the crate's own unit-test binary: the NIF API (`enif_*`) only exists in the BEAM.
#[cfg(all(feature = "nif", not(test)))]
mod nif;

pub use dtype::DType;
pub use engine::{engine, Engine};
pub use error::{Error, Result};
pub use tensor::Tensor;
