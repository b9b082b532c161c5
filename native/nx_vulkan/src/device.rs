//! Vulkan instance and device: choosing the most capable compute device, enabling the
//! features the kernels need, and describing the device to users.

use crate::error::{Error, Result};
use std::sync::Arc;
use vulkano::device::physical::{PhysicalDevice, PhysicalDeviceType};
use vulkano::device::{
    Device, DeviceCreateInfo, DeviceExtensions, DeviceFeatures, Queue, QueueCreateInfo, QueueFlags,
};
use vulkano::instance::{Instance, InstanceCreateFlags, InstanceCreateInfo, InstanceExtensions};
use vulkano::memory::MemoryPropertyFlags;
use vulkano::Version;

/// What the chosen device offers, as reported by `Nx.Vulkan.device_info/0`.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    /// Index in the instance's device list (what `NX_VULKAN_DEVICE` takes).
    pub index: usize,
    pub name: String,
    /// "discrete", "integrated", "virtual", "cpu" or "other".
    pub device_type: &'static str,
    pub driver: String,
    pub api_version: String,
    /// (size in bytes, device-local?) per memory heap.
    pub heaps: Vec<(u64, bool)>,
    pub subgroup_size: u32,
    /// Compute shaders have subgroup arithmetic (`subgroupMin` and the like), which
    /// sgemm.comp's exact-tile module uses.
    pub subgroup_arithmetic: bool,
    pub max_workgroup_count: [u32; 3],
    pub max_shared_memory: u32,
    pub max_storage_buffer_range: u32,
    pub max_allocation: u64,
    pub f16: bool,
    pub f64: bool,
    pub int64: bool,
    pub int16: bool,
    pub int8: bool,
    pub storage16: bool,
    pub cooperative_matrix: bool,
    /// The cooperative-matrix products the driver offers (`VK_KHR_cooperative_matrix` and
    /// `VK_NV_cooperative_matrix`), e.g. `"NV 16x8x16 f16*f16+f32->f32"` (M x N x K).
    pub cooperative_matrix_shapes: Vec<String>,
    /// f16 matmuls run on cooperative matrices (hgemm.comp, through
    /// `VK_KHR_cooperative_matrix`'s 16x16x16 f16 products with f32 accumulation). Off
    /// with `NX_VULKAN_COOPMAT=0`.
    pub cooperative_matrix_f16: bool,
    /// bf16 matmuls run on cooperative matrices too (16x16x16 bf16 products with f32
    /// accumulation, `VK_KHR_shader_bfloat16`). Off with `NX_VULKAN_COOPMAT=0`.
    pub cooperative_matrix_bf16: bool,
    /// Kernels can keep f32 subnormals (`shaderDenormPreserveFloat32`, independently of
    /// the other widths; the engine then asks for it in every module, see
    /// `kernels::spirv`). Without it a driver may flush them to zero.
    pub denorm_preserve_f32: bool,
    /// Device-local memory the host can map (resizable BAR or unified memory).
    pub host_visible_device_memory: bool,
    /// The device's UUID (Vulkan 1.1), as 32 hex digits; empty where the driver has none.
    pub device_uuid: String,
    /// The driver's own version number.
    pub driver_version: u32,
    /// Who made the device and which one (the header of the driver's pipeline-cache data).
    pub vendor_id: u32,
    pub device_id: u32,
    /// The driver's pipeline-cache UUID: cache data from another UUID is foreign.
    pub pipeline_cache_uuid: [u8; 16],
    /// Which Vulkan loader is in use (`loader.rs`), e.g. `system (libvulkan.so.1)`.
    pub loader: String,
    /// Features switched off with `NX_VULKAN_DISABLE_FEATURES` (to see how the package
    /// behaves on a device without them).
    pub disabled_features: Vec<String>,
}

/// Bytes as lowercase hex digits.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The opened device and its compute queue.
pub struct Gpu {
    pub device: Arc<Device>,
    pub queue: Arc<Queue>,
    pub info: DeviceInfo,
}

fn type_name(t: PhysicalDeviceType) -> &'static str {
    match t {
        PhysicalDeviceType::DiscreteGpu => "discrete",
        PhysicalDeviceType::IntegratedGpu => "integrated",
        PhysicalDeviceType::VirtualGpu => "virtual",
        PhysicalDeviceType::Cpu => "cpu",
        _ => "other",
    }
}

fn type_rank(t: PhysicalDeviceType) -> u32 {
    match t {
        PhysicalDeviceType::DiscreteGpu => 0,
        PhysicalDeviceType::IntegratedGpu => 1,
        PhysicalDeviceType::VirtualGpu => 2,
        PhysicalDeviceType::Cpu => 3,
        _ => 4,
    }
}

/// Why `pd` cannot run the kernels, or `None` when it can.
fn unusable_reason(pd: &PhysicalDevice) -> Option<String> {
    let f = pd.supported_features();
    if pd.api_version() < Version::V1_2 {
        return Some(format!("Vulkan {} < 1.2", pd.api_version()));
    }
    let missing: Vec<&str> = [
        ("bufferDeviceAddress", f.buffer_device_address),
        ("storageBuffer8BitAccess", f.storage_buffer8_bit_access),
        ("storageBuffer16BitAccess", f.storage_buffer16_bit_access),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(n, _)| *n)
    .collect();
    if !missing.is_empty() {
        return Some(format!("missing {}", missing.join(", ")));
    }
    if compute_queue_family(pd).is_none() {
        return Some("no compute queue".into());
    }
    None
}

fn compute_queue_family(pd: &PhysicalDevice) -> Option<u32> {
    let families = pd.queue_family_properties();
    // Prefer a compute queue without graphics (dedicated compute engines).
    let dedicated = families.iter().position(|q| {
        q.queue_flags.intersects(QueueFlags::COMPUTE)
            && !q.queue_flags.intersects(QueueFlags::GRAPHICS)
    });
    dedicated
        .or_else(|| {
            families
                .iter()
                .position(|q| q.queue_flags.intersects(QueueFlags::COMPUTE))
        })
        .map(|i| i as u32)
}

/// Picks a device: `NX_VULKAN_DEVICE` (an index or a name substring) when set, else the
/// most capable usable one (discrete > integrated > virtual > CPU).
fn choose(devices: &[Arc<PhysicalDevice>], wanted: Option<&str>) -> Result<usize> {
    if let Some(w) = wanted.filter(|w| !w.is_empty()) {
        let idx = match w.parse::<usize>() {
            Ok(i) if i < devices.len() => Some(i),
            Ok(_) => None,
            Err(_) => {
                let w = w.to_lowercase();
                devices
                    .iter()
                    .position(|d| d.properties().device_name.to_lowercase().contains(&w))
            }
        };
        let i = idx.ok_or_else(|| {
            let names: Vec<String> = devices
                .iter()
                .enumerate()
                .map(|(i, d)| format!("{i}: {}", d.properties().device_name))
                .collect();
            Error::NoDevice(format!(
                "NX_VULKAN_DEVICE={w:?} matches none of [{}]",
                names.join(", ")
            ))
        })?;
        if let Some(why) = unusable_reason(&devices[i]) {
            return Err(Error::NoDevice(format!(
                "{}: {why}",
                devices[i].properties().device_name
            )));
        }
        return Ok(i);
    }
    let mut best: Option<(u32, usize)> = None;
    let mut reasons = Vec::new();
    for (i, d) in devices.iter().enumerate() {
        match unusable_reason(d) {
            Some(why) => reasons.push(format!("{}: {why}", d.properties().device_name)),
            None => {
                let rank = type_rank(d.properties().device_type);
                if best.is_none_or(|(r, _)| rank < r) {
                    best = Some((rank, i));
                }
            }
        }
    }
    best.map(|(_, i)| i).ok_or_else(|| {
        if devices.is_empty() {
            Error::NoDevice(format!(
                "the Vulkan loader found no device. {}",
                crate::loader::no_device_hint()
            ))
        } else {
            Error::NoDevice(reasons.join("; "))
        }
    })
}

impl Gpu {
    /// Opens the device chosen by [`choose`], enabling every feature the kernels can use.
    pub fn open() -> Result<Gpu> {
        let loaded = crate::loader::load()?;
        let library = loaded.library;
        let portability = library.supported_extensions().khr_portability_enumeration;
        let instance = Instance::new(
            library,
            InstanceCreateInfo {
                flags: if portability {
                    InstanceCreateFlags::ENUMERATE_PORTABILITY
                } else {
                    InstanceCreateFlags::empty()
                },
                enabled_extensions: InstanceExtensions {
                    khr_portability_enumeration: portability,
                    ..InstanceExtensions::empty()
                },
                ..Default::default()
            },
        )
        .map_err(|e| {
            Error::NoDevice(format!(
                "creating the Vulkan instance: {}. {}",
                Error::from(e),
                crate::loader::no_device_hint()
            ))
        })?;
        let devices: Vec<Arc<PhysicalDevice>> = instance.enumerate_physical_devices()?.collect();
        let wanted = std::env::var("NX_VULKAN_DEVICE").ok();
        let index = choose(&devices, wanted.as_deref())?;
        let pd = devices[index].clone();
        let family = compute_queue_family(&pd).expect("checked by unusable_reason");
        let (sup, off) = masked_features(pd.supported_features())?;
        let sup = &sup;
        let mut info = describe(index, &pd);
        info.loader = loaded.description;
        apply_masked(&mut info, sup, &off);
        let coopmat = info.cooperative_matrix_f16 || info.cooperative_matrix_bf16;
        let ext = pd.supported_extensions();
        // NX_VULKAN_PIPELINE_STATS=1 (kernels/stats.rs): pipeline statistics where offered.
        let stats = crate::kernels::stats_wanted()
            && ext.khr_pipeline_executable_properties
            && sup.pipeline_executable_info;
        let features = DeviceFeatures {
            buffer_device_address: true,
            storage_buffer8_bit_access: true,
            storage_buffer16_bit_access: true,
            shader_int8: sup.shader_int8,
            shader_int16: sup.shader_int16,
            shader_int64: sup.shader_int64,
            shader_float64: sup.shader_float64,
            shader_float16: sup.shader_float16,
            shader_buffer_int64_atomics: sup.shader_buffer_int64_atomics,
            synchronization2: sup.synchronization2,
            // hgemm.comp's SPIR-V uses the Vulkan memory model, as GL_KHR_cooperative_matrix
            // requires. With the model enabled, every module's device-scope atomics
            // (indexed_add's) need its device-scope feature too.
            cooperative_matrix: coopmat,
            vulkan_memory_model: coopmat,
            vulkan_memory_model_device_scope: coopmat,
            pipeline_executable_info: stats,
            ..DeviceFeatures::empty()
        };
        let extensions = DeviceExtensions {
            khr_portability_subset: ext.khr_portability_subset,
            khr_cooperative_matrix: coopmat,
            khr_pipeline_executable_properties: stats,
            ..DeviceExtensions::empty()
        };
        let create_info = DeviceCreateInfo {
            queue_create_infos: vec![QueueCreateInfo {
                queue_family_index: family,
                ..Default::default()
            }],
            enabled_features: features,
            enabled_extensions: extensions,
            ..Default::default()
        };
        let failed = |e: Error| {
            Error::NoDevice(format!(
                "creating the device on {}: {e}",
                pd.properties().device_name
            ))
        };
        // bf16 cooperative matrices need a device feature vulkano does not know: such a
        // device is created with Vulkan's own call (device_create.rs), as is any device
        // with NX_VULKAN_DIRECT_DEVICE=1 (to test that path where bf16 is not offered).
        let direct = std::env::var("NX_VULKAN_DIRECT_DEVICE").is_ok_and(|v| v == "1");
        let bf16 = info.cooperative_matrix_bf16;
        let created = if bf16 || direct {
            crate::device_create::create(&pd, create_info.clone(), bf16)
        } else {
            None
        };
        let (device, queue) = match created {
            Some(Ok(pair)) => pair,
            Some(Err(e)) => return Err(failed(Error::Vulkan(format!("vkCreateDevice: {e}")))),
            None => {
                let (device, mut queues) =
                    Device::new(pd.clone(), create_info).map_err(|e| failed(Error::from(e)))?;
                let queue = queues
                    .next()
                    .ok_or_else(|| Error::NoDevice("no queue created".into()))?;
                (device, queue)
            }
        };
        // What `dot` reads: bf16 products go to the cooperative-matrix kernel only where the
        // device was created with the extension (`create` declines a feature set it does
        // not chain, and vulkano's `Device::new` cannot enable it).
        info.cooperative_matrix_bf16 = crate::device_create::created_with_bf16();
        Ok(Gpu {
            device,
            queue,
            info,
        })
    }
}

fn describe(index: usize, pd: &PhysicalDevice) -> DeviceInfo {
    let p = pd.properties();
    let f = pd.supported_features();
    let mem = pd.memory_properties();
    let heaps = mem
        .memory_heaps
        .iter()
        .map(|h| {
            (
                h.size,
                h.flags
                    .intersects(vulkano::memory::MemoryHeapFlags::DEVICE_LOCAL),
            )
        })
        .collect();
    // `NX_VULKAN_STAGED=1` keeps tensors in device-only memory even where the host could
    // map it (transfers then go through staging buffers): a knob to compare the two.
    let staged = std::env::var("NX_VULKAN_STAGED").is_ok_and(|v| v == "1");
    let host_visible_device_memory = !staged
        && mem.memory_types.iter().any(|t| {
            t.property_flags
                .contains(MemoryPropertyFlags::DEVICE_LOCAL | MemoryPropertyFlags::HOST_VISIBLE)
                && mem.memory_heaps[t.heap_index as usize].size >= (1 << 30)
        });
    let driver = match (&p.driver_name, &p.driver_info) {
        (Some(n), Some(i)) if !i.is_empty() => format!("{n} {i}"),
        (Some(n), _) => n.clone(),
        _ => format!("driver {}", p.driver_version),
    };
    let shapes = cooperative_matrix_shapes(pd);
    DeviceInfo {
        index,
        name: p.device_name.clone(),
        device_type: type_name(p.device_type),
        driver,
        api_version: pd.api_version().to_string(),
        heaps,
        subgroup_size: p.subgroup_size.unwrap_or(0),
        subgroup_arithmetic: p
            .subgroup_supported_operations
            .is_some_and(|o| o.intersects(vulkano::device::physical::SubgroupFeatures::ARITHMETIC))
            && p.subgroup_supported_stages
                .is_some_and(|s| s.intersects(vulkano::shader::ShaderStages::COMPUTE)),
        max_workgroup_count: p.max_compute_work_group_count,
        max_shared_memory: p.max_compute_shared_memory_size,
        max_storage_buffer_range: p.max_storage_buffer_range,
        max_allocation: p.max_memory_allocation_size.unwrap_or(0),
        f16: f.shader_float16,
        f64: f.shader_float64,
        int64: f.shader_int64,
        int16: f.shader_int16,
        int8: f.shader_int8,
        storage16: f.storage_buffer16_bit_access,
        cooperative_matrix: pd.supported_extensions().khr_cooperative_matrix,
        cooperative_matrix_f16: cooperative_matrix_runs(pd, &shapes, "f16"),
        cooperative_matrix_bf16: cooperative_matrix_runs(pd, &shapes, "bf16"),
        cooperative_matrix_shapes: shapes,
        denorm_preserve_f32: crate::kernels::spirv::keeps_f32_denormals(pd),
        host_visible_device_memory,
        device_uuid: p.device_uuid.map(|u| hex(&u)).unwrap_or_default(),
        driver_version: p.driver_version,
        vendor_id: p.vendor_id,
        device_id: p.device_id,
        pipeline_cache_uuid: p.pipeline_cache_uuid,
        loader: String::new(),
        disabled_features: Vec::new(),
    }
}

/// Clears one feature of a feature set.
type SwitchOff = fn(&mut DeviceFeatures);

/// The Vulkan features `NX_VULKAN_DISABLE_FEATURES` may switch off (comma-separated
/// Vulkan names), so that a capable machine shows what a device without them does.
const MASKABLE: [(&str, SwitchOff); 6] = [
    ("shaderFloat64", |f| f.shader_float64 = false),
    ("shaderInt64", |f| f.shader_int64 = false),
    ("shaderFloat16", |f| f.shader_float16 = false),
    ("shaderInt16", |f| f.shader_int16 = false),
    ("shaderInt8", |f| f.shader_int8 = false),
    ("cooperativeMatrix", |f| f.cooperative_matrix = false),
];

/// The device's features less those named in `NX_VULKAN_DISABLE_FEATURES`, and those names.
fn masked_features(sup: &DeviceFeatures) -> Result<(DeviceFeatures, Vec<String>)> {
    let mut sup = *sup;
    let list = std::env::var("NX_VULKAN_DISABLE_FEATURES").unwrap_or_default();
    let off: Vec<String> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(String::from)
        .collect();
    for name in &off {
        let Some((_, switch_off)) = MASKABLE.iter().find(|(n, _)| n == name) else {
            let known: Vec<&str> = MASKABLE.iter().map(|(n, _)| *n).collect();
            return Err(Error::InvalidArgument(format!(
                "NX_VULKAN_DISABLE_FEATURES: unknown feature {name:?} (known: {})",
                known.join(", ")
            )));
        };
        switch_off(&mut sup);
    }
    Ok((sup, off))
}

/// Makes the description agree with the masked features.
fn apply_masked(info: &mut DeviceInfo, sup: &DeviceFeatures, off: &[String]) {
    info.f64 &= sup.shader_float64;
    info.int64 &= sup.shader_int64;
    info.f16 &= sup.shader_float16;
    info.int16 &= sup.shader_int16;
    info.int8 &= sup.shader_int8;
    if !sup.cooperative_matrix {
        info.cooperative_matrix = false;
        info.cooperative_matrix_f16 = false;
        info.cooperative_matrix_bf16 = false;
    }
    info.disabled_features = off.to_vec();
}

/// The products listed by `vkGetPhysicalDeviceCooperativeMatrixProperties{KHR,NV}` for
/// each of the two extensions the device has (vulkano does not wrap these queries).
fn cooperative_matrix_shapes(pd: &PhysicalDevice) -> Vec<String> {
    use ash::vk;
    use vulkano::VulkanObject;
    let fns = pd.instance().fns();
    let ext = pd.supported_extensions();
    let name = |t: vk::ComponentTypeKHR| match t {
        vk::ComponentTypeKHR::FLOAT16 => "f16".to_string(),
        vk::ComponentTypeKHR::FLOAT32 => "f32".to_string(),
        vk::ComponentTypeKHR::FLOAT64 => "f64".to_string(),
        vk::ComponentTypeKHR::SINT8 => "s8".to_string(),
        vk::ComponentTypeKHR::UINT8 => "u8".to_string(),
        vk::ComponentTypeKHR::SINT32 => "s32".to_string(),
        vk::ComponentTypeKHR::UINT32 => "u32".to_string(),
        // VK_COMPONENT_TYPE_BFLOAT16_KHR (VK_KHR_shader_bfloat16), newer than ash 0.38.
        t if t.as_raw() == 1_000_141_000 => "bf16".to_string(),
        other => format!("type{}", other.as_raw()),
    };
    let shape = |kind: &str, (m, n, k): (u32, u32, u32), types: [vk::ComponentTypeKHR; 4]| {
        let [a, b, c, r] = types.map(name);
        format!("{kind} {m}x{n}x{k} {a}*{b}+{c}->{r}")
    };
    let mut shapes = Vec::new();
    if ext.khr_cooperative_matrix {
        let f = fns
            .khr_cooperative_matrix
            .get_physical_device_cooperative_matrix_properties_khr;
        // SAFETY: the query of a valid physical device, with its own count.
        let props = enumerate(|n, out| unsafe { f(pd.handle(), n, out) });
        shapes.extend(props.iter().map(|p| {
            shape(
                "KHR",
                (p.m_size, p.n_size, p.k_size),
                [p.a_type, p.b_type, p.c_type, p.result_type],
            )
        }));
    }
    if ext.nv_cooperative_matrix {
        let f = fns
            .nv_cooperative_matrix
            .get_physical_device_cooperative_matrix_properties_nv;
        // SAFETY: as above.
        let props = enumerate(|n, out| unsafe { f(pd.handle(), n, out) });
        let t = |c: vk::ComponentTypeNV| vk::ComponentTypeKHR::from_raw(c.as_raw());
        shapes.extend(props.iter().map(|p| {
            shape(
                "NV",
                (p.m_size, p.n_size, p.k_size),
                [t(p.a_type), t(p.b_type), t(p.c_type), t(p.d_type)],
            )
        }));
    }
    shapes
}

/// Vulkan's two-call enumeration: the count, then that many items (none on failure).
fn enumerate<T: Default + Clone>(query: impl Fn(&mut u32, *mut T) -> ash::vk::Result) -> Vec<T> {
    let mut n = 0u32;
    if query(&mut n, std::ptr::null_mut()) != ash::vk::Result::SUCCESS {
        return Vec::new();
    }
    let mut items = vec![T::default(); n as usize];
    if query(&mut n, items.as_mut_ptr()) != ash::vk::Result::SUCCESS {
        return Vec::new();
    }
    items.truncate(n as usize);
    items
}

/// Whether hgemm.comp can run: `VK_KHR_cooperative_matrix` with its feature, 16x16x16
/// `element` products accumulating in f32 (`element` "f16" or "bf16"), the Vulkan memory
/// model (with device scope) and subgroups of 32 (the kernel has eight per workgroup),
/// unless `NX_VULKAN_COOPMAT=0`. bf16 also needs `VK_KHR_shader_bfloat16`.
fn cooperative_matrix_runs(pd: &PhysicalDevice, shapes: &[String], element: &str) -> bool {
    let f = pd.supported_features();
    let product = format!("KHR 16x16x16 {element}*{element}+f32->f32");
    std::env::var("NX_VULKAN_COOPMAT").map_or(true, |v| v != "0")
        && pd.supported_extensions().khr_cooperative_matrix
        && f.cooperative_matrix
        && f.vulkan_memory_model
        && f.vulkan_memory_model_device_scope
        && f.shader_float16
        && f.storage_buffer16_bit_access
        && pd.properties().subgroup_size == Some(32)
        && shapes.contains(&product)
        && (element != "bf16" || crate::device_create::offers_bf16_cooperative_matrix(pd))
}
