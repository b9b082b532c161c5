//! The GLSL kernels of `shaders/`, compiled to optimised SPIR-V by the build script
//! (`build/shaders.rs`). One module per (kernel, compute class or element width); each
//! exposes `load(device)`.
use std::sync::Arc;
use vulkano::device::Device;
use vulkano::shader::{spirv::bytes_to_words, ShaderModule, ShaderModuleCreateInfo};
use vulkano::{Validated, VulkanError};

/// What `load` returns.
pub type LoadResult = Result<Arc<ShaderModule>, Validated<VulkanError>>;

fn load(device: Arc<Device>, bytes: &[u8]) -> LoadResult {
    // The build script wrote whole SPIR-V words; a failure here is a build bug.
    let words = bytes_to_words(bytes).expect("SPIR-V of a whole number of words");
    // SAFETY: the words are SPIR-V that shaderc produced for Vulkan 1.2 from our kernels.
    unsafe { ShaderModule::new(device, ShaderModuleCreateInfo::new(&words)) }
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));
