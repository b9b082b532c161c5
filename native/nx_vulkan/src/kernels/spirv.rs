//! The GLSL kernels of `shaders/`, compiled to optimised SPIR-V by the build script
//! (`build/shaders.rs`). One module per (kernel, compute class or element width); each
//! exposes `load(device)`.
use std::sync::Arc;
use vulkano::device::physical::{PhysicalDevice, ShaderFloatControlsIndependence};
use vulkano::device::Device;
use vulkano::shader::{spirv::bytes_to_words, ShaderModule, ShaderModuleCreateInfo};
use vulkano::{Validated, VulkanError};

/// What `load` returns.
pub type LoadResult = Result<Arc<ShaderModule>, Validated<VulkanError>>;

fn load(device: Arc<Device>, bytes: &[u8]) -> LoadResult {
    // The build script wrote whole SPIR-V words; a failure here is a build bug.
    let mut words = bytes_to_words(bytes)
        .expect("SPIR-V of a whole number of words")
        .into_owned();
    if keeps_f32_denormals(device.physical_device()) {
        preserve_f32_denormals(&mut words);
    }
    // SAFETY: the words are SPIR-V that shaderc produced for Vulkan 1.2 from our kernels,
    // with at most the DenormPreserve capability and execution mode added, which the
    // device supports.
    unsafe { ShaderModule::new(device, ShaderModuleCreateInfo::new(&words)) }
}

/// Whether kernels on `device` keep f32 subnormals: it offers DenormPreserve for f32 on
/// its own (independence NONE would need the same mode for every width, and f16's and
/// f64's are not asked for), which `load` then asks for in every module.
pub(crate) fn keeps_f32_denormals(device: &PhysicalDevice) -> bool {
    let properties = device.properties();
    let independent = matches!(
        properties.denorm_behavior_independence,
        Some(ShaderFloatControlsIndependence::Float32Only | ShaderFloatControlsIndependence::All)
    );
    properties.shader_denorm_preserve_float32 == Some(true) && independent
}

const OP_CAPABILITY: u32 = 17;
const OP_ENTRY_POINT: u32 = 15;
const OP_EXECUTION_MODE: u32 = 16;
const CAPABILITY_DENORM_PRESERVE: u32 = 4464;
const MODE_DENORM_PRESERVE: u32 = 4459;

/// Adds `OpCapability DenormPreserve` and `OpExecutionMode main DenormPreserve 32`
/// (SPIR-V 1.4 float controls; our modules are SPIR-V 1.5): without them drivers may
/// flush f32 subnormals to zero (NVIDIA's does, in every op down to negate), and Nx
/// keeps them. GLSL has no way to ask for it, so the words are patched at load.
pub(crate) fn preserve_f32_denormals(words: &mut Vec<u32>) {
    const HEADER: usize = 5;
    let mut entries = Vec::new();
    let mut end_of_entries = None;
    let mut i = HEADER;
    while i < words.len() {
        let (len, op) = ((words[i] >> 16) as usize, words[i] & 0xFFFF);
        if len == 0 {
            return; // malformed: leave the module as the compiler wrote it
        }
        if op == OP_ENTRY_POINT && i + 2 < words.len() {
            entries.push(words[i + 2]);
            end_of_entries = Some(i + len);
        }
        i += len;
    }
    let Some(at) = end_of_entries else { return };
    let modes: Vec<u32> = entries
        .iter()
        .flat_map(|&id| [4 << 16 | OP_EXECUTION_MODE, id, MODE_DENORM_PRESERVE, 32])
        .collect();
    words.splice(at..at, modes);
    words.splice(
        HEADER..HEADER,
        [2 << 16 | OP_CAPABILITY, CAPABILITY_DENORM_PRESERVE],
    );
}

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denorm_preserve_lands_after_the_capabilities_and_entry_points() {
        // Header, OpCapability Shader, OpMemoryModel, OpEntryPoint GLCompute %4 "main",
        // OpExecutionMode %4 LocalSize 256 1 1.
        let main = u32::from_le_bytes(*b"main");
        let mut words = vec![
            0x0723_0203,
            0x0001_0500,
            0,
            10,
            0, // header
            2 << 16 | 17,
            1, // OpCapability Shader
            3 << 16 | 14,
            0,
            1, // OpMemoryModel Logical GLSL450
            5 << 16 | 15,
            5,
            4,
            main,
            0, // OpEntryPoint GLCompute %4 "main"
            6 << 16 | 16,
            4,
            17,
            256,
            1,
            1, // OpExecutionMode %4 LocalSize 256 1 1
        ];
        preserve_f32_denormals(&mut words);
        assert_eq!(&words[5..7], &[2 << 16 | 17, 4464]);
        assert_eq!(&words[7..9], &[2 << 16 | 17, 1]);
        // The entry point (5 words from 12), then the new mode, then LocalSize.
        assert_eq!(&words[17..21], &[4 << 16 | 16, 4, 4459, 32]);
        assert_eq!(words[21], 6 << 16 | 16);
        assert_eq!(words.len(), 27);
    }
}
