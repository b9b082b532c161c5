//! Creating the logical device with device features vulkano 0.35 does not know.
//!
//! bf16 cooperative matrices (hgemm.comp's bf16 modules) need `VK_KHR_shader_bfloat16` and
//! its `shaderBFloat16CooperativeMatrix` feature, which are newer than vulkano's registry.
//! Where the device offers them, the device is created here with Vulkan's own call (the
//! same queue, extensions and features vulkano would ask for, plus those) and handed to
//! vulkano with `Device::from_handle`; everything else keeps `Device::new`, unless
//! `NX_VULKAN_DIRECT_DEVICE=1` (which the tests use to run this path on lavapipe too).
use std::ffi::{c_void, CString};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use ash::vk;
use vulkano::device::physical::PhysicalDevice;
use vulkano::device::{Device, DeviceCreateInfo, DeviceFeatures, Queue};
use vulkano::{Version, VulkanObject};

/// `VK_KHR_shader_bfloat16`'s name.
const BF16_EXTENSION: &str = "VK_KHR_shader_bfloat16";
/// `VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_BFLOAT16_FEATURES_KHR`.
const BF16_FEATURES_TYPE: i32 = 1_000_141_000;

/// `VkPhysicalDeviceShaderBfloat16FeaturesKHR` (newer than ash 0.38).
#[repr(C)]
struct Bf16Features {
    s_type: vk::StructureType,
    p_next: *mut c_void,
    shader_bfloat16_type: vk::Bool32,
    shader_bfloat16_dot_product: vk::Bool32,
    shader_bfloat16_cooperative_matrix: vk::Bool32,
}

impl Bf16Features {
    fn new(cooperative_matrix: bool) -> Self {
        Bf16Features {
            s_type: vk::StructureType::from_raw(BF16_FEATURES_TYPE),
            p_next: std::ptr::null_mut(),
            shader_bfloat16_type: cooperative_matrix.into(),
            shader_bfloat16_dot_product: 0,
            shader_bfloat16_cooperative_matrix: cooperative_matrix.into(),
        }
    }
}

/// Whether `pd` offers bf16 cooperative matrices: the extension, with its bf16 type and
/// cooperative-matrix features, on a Vulkan 1.3 device (`create` builds 1.3's feature
/// structures).
pub fn offers_bf16_cooperative_matrix(pd: &PhysicalDevice) -> bool {
    let listed = pd
        .extension_properties()
        .iter()
        .any(|e| e.extension_name == BF16_EXTENSION);
    if !listed || pd.api_version() < Version::V1_3 {
        return false;
    }
    let mut bf16 = Bf16Features::new(false);
    let mut features2 = vk::PhysicalDeviceFeatures2 {
        p_next: (&mut bf16 as *mut Bf16Features).cast(),
        ..Default::default()
    };
    let fns = pd.instance().fns();
    // SAFETY: a valid physical device of a Vulkan 1.3 instance; the chain is one
    // structure of the layout the extension defines, alive for the call.
    unsafe { (fns.v1_1.get_physical_device_features2)(pd.handle(), &mut features2) };
    bf16.shader_bfloat16_type == vk::TRUE && bf16.shader_bfloat16_cooperative_matrix == vk::TRUE
}

/// The features `create` can pass through its own structures: every one the engine asks
/// for (see `Gpu::open`). A feature outside this set makes `create` decline.
fn chained() -> DeviceFeatures {
    DeviceFeatures {
        shader_int16: true,
        shader_int64: true,
        shader_float64: true,
        storage_buffer16_bit_access: true,
        buffer_device_address: true,
        storage_buffer8_bit_access: true,
        shader_int8: true,
        shader_float16: true,
        shader_buffer_int64_atomics: true,
        vulkan_memory_model: true,
        vulkan_memory_model_device_scope: true,
        synchronization2: true,
        cooperative_matrix: true,
        pipeline_executable_info: true,
        ..DeviceFeatures::empty()
    }
}

/// The opened device and its one queue.
pub type DeviceAndQueue = (Arc<Device>, Arc<Queue>);

/// Whether a device was created by `create` in this process, and with bf16.
static CREATED_HERE: AtomicBool = AtomicBool::new(false);
static CREATED_WITH_BF16: AtomicBool = AtomicBool::new(false);

/// Whether the engine's device came from `create` (tests check that
/// `NX_VULKAN_DIRECT_DEVICE=1` reaches it on devices without bf16).
pub fn created_here() -> bool {
    CREATED_HERE.load(Ordering::Relaxed)
}

/// Whether the engine's device has bf16 cooperative matrices enabled.
pub fn created_with_bf16() -> bool {
    CREATED_WITH_BF16.load(Ordering::Relaxed)
}

/// Creates the device of `info` with Vulkan's own call, with bf16 cooperative matrices
/// enabled as well when `bf16` (`VK_KHR_shader_bfloat16`); `None` where `info` asks for a
/// feature this function does not chain, so the caller uses `Device::new`.
///
/// `info` must name an existing queue family and supported extensions (vulkano does not
/// check them here); a feature the device lacks makes the driver's call fail, as it
/// would make `Device::new` fail. `bf16` only where `offers_bf16_cooperative_matrix`.
pub fn create(
    pd: &Arc<PhysicalDevice>,
    info: DeviceCreateInfo,
    bf16: bool,
) -> Option<Result<DeviceAndQueue, vk::Result>> {
    let f = &info.enabled_features;
    if !chained().contains(f) || pd.api_version() < Version::V1_3 {
        return None;
    }
    let core = vk::PhysicalDeviceFeatures::default()
        .shader_int16(f.shader_int16)
        .shader_int64(f.shader_int64)
        .shader_float64(f.shader_float64);
    let mut v11 = vk::PhysicalDeviceVulkan11Features::default()
        .storage_buffer16_bit_access(f.storage_buffer16_bit_access);
    let mut v12 = vk::PhysicalDeviceVulkan12Features::default()
        .buffer_device_address(f.buffer_device_address)
        .storage_buffer8_bit_access(f.storage_buffer8_bit_access)
        .shader_int8(f.shader_int8)
        .shader_float16(f.shader_float16)
        .shader_buffer_int64_atomics(f.shader_buffer_int64_atomics)
        .vulkan_memory_model(f.vulkan_memory_model)
        .vulkan_memory_model_device_scope(f.vulkan_memory_model_device_scope);
    let mut v13 =
        vk::PhysicalDeviceVulkan13Features::default().synchronization2(f.synchronization2);
    let mut coop =
        vk::PhysicalDeviceCooperativeMatrixFeaturesKHR::default().cooperative_matrix(true);
    let mut stats = vk::PhysicalDevicePipelineExecutablePropertiesFeaturesKHR::default()
        .pipeline_executable_info(true);
    let mut bf16_features = Bf16Features::new(true);
    let mut features2 = vk::PhysicalDeviceFeatures2::default()
        .features(core)
        .push_next(&mut v11)
        .push_next(&mut v12)
        .push_next(&mut v13);
    if f.cooperative_matrix {
        features2 = features2.push_next(&mut coop);
    }
    if f.pipeline_executable_info {
        features2 = features2.push_next(&mut stats);
    }
    if bf16 {
        bf16_features.p_next = features2.p_next;
        features2.p_next = (&mut bf16_features as *mut Bf16Features).cast();
    }

    let mut names = Vec::<CString>::from(&info.enabled_extensions);
    if bf16 {
        names.push(CString::new(BF16_EXTENSION).expect("no NUL in the name"));
    }
    let name_ptrs: Vec<*const std::ffi::c_char> = names.iter().map(|n| n.as_ptr()).collect();
    let priorities: Vec<Vec<f32>> = info
        .queue_create_infos
        .iter()
        .map(|q| q.queues.clone())
        .collect();
    let queues: Vec<vk::DeviceQueueCreateInfo> = info
        .queue_create_infos
        .iter()
        .zip(&priorities)
        .map(|(q, p)| {
            vk::DeviceQueueCreateInfo::default()
                .queue_family_index(q.queue_family_index)
                .queue_priorities(p)
        })
        .collect();
    let create = vk::DeviceCreateInfo::default()
        .queue_create_infos(&queues)
        .enabled_extension_names(&name_ptrs)
        .push_next(&mut features2);

    let fns = pd.instance().fns();
    let mut handle = vk::Device::null();
    // SAFETY: every structure lives until the call returns; the extensions and features
    // are the device's own (vulkano validated the rest of `info`, the bf16 ones were
    // queried by `offers_bf16_cooperative_matrix`).
    let result =
        unsafe { (fns.v1_0.create_device)(pd.handle(), &create, std::ptr::null(), &mut handle) };
    if result != vk::Result::SUCCESS {
        return Some(Err(result));
    }
    CREATED_HERE.store(true, Ordering::Relaxed);
    CREATED_WITH_BF16.store(bf16, Ordering::Relaxed);
    // SAFETY: `handle` was just created from `pd` with exactly `info`'s queues, extensions
    // and features (plus the bf16 ones vulkano does not track); vulkano owns it from here.
    let (device, mut queues) = unsafe { Device::from_handle(pd.clone(), handle, info) };
    let queue = queues.next().expect("one queue was asked for");
    Some(Ok((device, queue)))
}
