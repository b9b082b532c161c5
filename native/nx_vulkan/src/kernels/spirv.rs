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
    if uses_bf16(&words) {
        return load_bf16(device, &words);
    }
    // SAFETY: the words are SPIR-V that shaderc produced for Vulkan 1.2 from our kernels,
    // with at most the DenormPreserve capability and execution mode added, which the
    // device supports.
    unsafe { ShaderModule::new(device, ShaderModuleCreateInfo::new(&words)) }
}

const OP_EXTENSION: u32 = 10;
const OP_TYPE_FLOAT: u32 = 22;
/// `BFloat16TypeKHR`, `BFloat16DotProductKHR`, `BFloat16CooperativeMatrixKHR`
/// (SPV_KHR_bfloat16).
const BF16_CAPABILITIES: [u32; 3] = [5116, 5117, 5118];

/// Whether a module declares a SPV_KHR_bfloat16 capability.
fn uses_bf16(words: &[u32]) -> bool {
    instructions(words).any(|(_, op, operands)| {
        op == OP_CAPABILITY
            && operands
                .first()
                .is_some_and(|c| BF16_CAPABILITIES.contains(c))
    })
}

/// The (word index, opcode, operands) of each instruction after the header; stops at a
/// malformed one.
fn instructions(words: &[u32]) -> impl Iterator<Item = (usize, u32, &[u32])> {
    let mut i = 5;
    std::iter::from_fn(move || {
        let len = (*words.get(i)? >> 16) as usize;
        if len == 0 || i + len > words.len() {
            return None;
        }
        let item = (i, words[i] & 0xFFFF, &words[i + 1..i + len]);
        i += len;
        Some(item)
    })
}

/// The module as vulkano 0.35 can read it, for reflection only: SPV_KHR_bfloat16's
/// capabilities and extension removed and its types declared as plain 16-bit floats
/// (vulkano's SPIR-V grammar predates the extension; the interface it reflects, entry
/// point, push constants and specialization constants, does not involve these types).
pub(crate) fn without_bf16(words: &[u32]) -> Vec<u32> {
    let mut out = words[..5.min(words.len())].to_vec();
    for (_, op, operands) in instructions(words) {
        let drop = match op {
            OP_CAPABILITY => BF16_CAPABILITIES.contains(&operands[0]),
            OP_EXTENSION => spirv_string(operands) == "SPV_KHR_bfloat16",
            _ => false,
        };
        if drop {
            continue;
        }
        // OpTypeFloat %id 16 BFloat16KHR: the encoding operand goes.
        let kept = if op == OP_TYPE_FLOAT {
            &operands[..2]
        } else {
            operands
        };
        out.push(((kept.len() as u32 + 1) << 16) | op);
        out.extend_from_slice(kept);
    }
    out
}

/// A SPIR-V literal string (NUL-terminated, packed little-endian into words).
fn spirv_string(words: &[u32]) -> String {
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Creates a bf16 module: the driver gets `words` as they are, through Vulkan's own call;
/// vulkano reflects `without_bf16(words)`, which has the same interface.
fn load_bf16(device: Arc<Device>, words: &[u32]) -> LoadResult {
    use ash::vk;
    use vulkano::VulkanObject;
    let info = vk::ShaderModuleCreateInfo::default().code(words);
    let mut handle = vk::ShaderModule::null();
    let fns = device.fns();
    // SAFETY: SPIR-V that shaderc produced from hgemm.comp for a device with bf16
    // cooperative matrices enabled (kernels/mod.rs checks it before loading a bf16
    // module); `info` outlives the call.
    let result = unsafe {
        (fns.v1_0.create_shader_module)(device.handle(), &info, std::ptr::null(), &mut handle)
    };
    if result != vk::Result::SUCCESS {
        return Err(Validated::Error(VulkanError::from(result)));
    }
    let reflected = without_bf16(words);
    // SAFETY: `handle` is a module just created on `device` from code whose interface
    // `reflected` describes; vulkano owns (and destroys) it from here.
    Ok(unsafe {
        ShaderModule::from_handle(device, handle, ShaderModuleCreateInfo::new(&reflected))
    })
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
    let mut end = HEADER;
    for (at, op, operands) in instructions(words) {
        end = at + 1 + operands.len();
        if op == OP_ENTRY_POINT && operands.len() >= 2 {
            entries.push(operands[1]);
            end_of_entries = Some(end);
        }
    }
    if end != words.len() {
        return; // malformed: leave the module as the compiler wrote it
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

    #[test]
    fn the_reflected_copy_of_a_bf16_module_declares_no_bf16() {
        let ext: Vec<u32> = b"SPV_KHR_bfloat16\0\0\0\0"
            .chunks(4)
            .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
            .collect();
        let mut words = vec![0x0723_0203, 0x0001_0500, 0, 10, 0];
        words.extend([2 << 16 | 17, 1]); // OpCapability Shader
        words.extend([2 << 16 | 17, 5116]); // OpCapability BFloat16TypeKHR
        words.extend([2 << 16 | 17, 5118]); // OpCapability BFloat16CooperativeMatrixKHR
        words.push((ext.len() as u32 + 1) << 16 | 10); // OpExtension "SPV_KHR_bfloat16"
        words.extend(&ext);
        words.extend([4 << 16 | 22, 7, 16, 0]); // %7 = OpTypeFloat 16 BFloat16KHR
        words.extend([3 << 16 | 22, 8, 32]); // %8 = OpTypeFloat 32
        assert!(uses_bf16(&words));
        let plain = without_bf16(&words);
        assert!(!uses_bf16(&plain));
        assert_eq!(
            &plain[5..],
            &[2 << 16 | 17, 1, 3 << 16 | 22, 7, 16, 3 << 16 | 22, 8, 32]
        );
        assert_eq!(&plain[..5], &words[..5]);
    }
}
