//! `NX_VULKAN_PIPELINE_STATS=1`: the driver's statistics of each compute pipeline the
//! registry builds (register count, shared and local memory, ...), printed to stderr, on
//! devices with `VK_KHR_pipeline_executable_properties` (NVIDIA's, AMD's and Intel's
//! drivers; not lavapipe). A tuning aid: a kernel whose registers grow past an occupancy
//! step, or that spills to local memory, shows it here.
//!
//! `NX_VULKAN_PIPELINE_DUMP=<dir>` also writes, per pipeline, whatever internal
//! representations the driver offers (`<label>.<executable>.<name>.txt` or `.bin`) and the
//! pipeline cache's data (`<label>.cache.bin`) into `<dir>`, to read the code the driver
//! made of a kernel where its tools can.
//!
//! vulkano does not expose the capture flags, so a second pipeline is built with raw
//! Vulkan calls from the same module, layout and specialization, and destroyed after its
//! statistics are read.
use std::ffi::CStr;
use std::sync::Arc;
use vulkano::device::Device;
use vulkano::pipeline::PipelineLayout;
use vulkano::shader::ShaderModule;
use vulkano::VulkanObject;

/// Whether statistics were asked for (`NX_VULKAN_PIPELINE_STATS=1`, or a dump folder).
pub fn wanted() -> bool {
    std::env::var("NX_VULKAN_PIPELINE_STATS").is_ok_and(|v| v == "1") || dump_dir().is_some()
}

/// The folder `NX_VULKAN_PIPELINE_DUMP` names, if set and not empty.
fn dump_dir() -> Option<std::path::PathBuf> {
    std::env::var_os("NX_VULKAN_PIPELINE_DUMP")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
}

/// `label` with every character outside `[A-Za-z0-9_-]` replaced, for a file name.
fn file_stem(label: &str) -> String {
    let s: String = label
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.chars().take(120).collect()
}

/// Prints the statistics of `module`'s `main` specialized with `values` (constant id,
/// value) under `layout`, labelled `label`. For devices created with the extension's
/// `pipeline_executable_info` feature (the caller checks).
pub fn report(
    device: &Arc<Device>,
    layout: &PipelineLayout,
    module: &ShaderModule,
    values: &[(u32, u32)],
    label: &str,
) {
    match capture(device, layout, module, values, label) {
        Ok(lines) => eprintln!("[nx_vulkan] pipeline stats {label}: {}", lines.join(", ")),
        Err(e) => eprintln!("[nx_vulkan] pipeline stats {label}: failed ({e:?})"),
    }
}

fn capture(
    device: &Arc<Device>,
    layout: &PipelineLayout,
    module: &ShaderModule,
    values: &[(u32, u32)],
    label: &str,
) -> Result<Vec<String>, ash::vk::Result> {
    use ash::vk;
    let dump = dump_dir();
    let entries: Vec<vk::SpecializationMapEntry> = values
        .iter()
        .enumerate()
        .map(|(i, &(id, _))| vk::SpecializationMapEntry {
            constant_id: id,
            offset: 4 * i as u32,
            size: 4,
        })
        .collect();
    let data: Vec<u32> = values.iter().map(|&(_, v)| v).collect();
    let spec = vk::SpecializationInfo {
        map_entry_count: entries.len() as u32,
        p_map_entries: entries.as_ptr(),
        data_size: 4 * data.len(),
        p_data: data.as_ptr().cast(),
        ..Default::default()
    };
    let stage = vk::PipelineShaderStageCreateInfo {
        stage: vk::ShaderStageFlags::COMPUTE,
        module: module.handle(),
        p_name: c"main".as_ptr(),
        p_specialization_info: &spec,
        ..Default::default()
    };
    let mut flags = vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR;
    if dump.is_some() {
        flags |= vk::PipelineCreateFlags::CAPTURE_INTERNAL_REPRESENTATIONS_KHR;
    }
    let info = vk::ComputePipelineCreateInfo {
        flags,
        stage,
        layout: layout.handle(),
        ..Default::default()
    };
    let fns = device.fns();
    let mut pipeline = vk::Pipeline::null();
    let mut cache = vk::PipelineCache::null();
    // SAFETY: every pointer refers to locals that outlive the calls; the pipeline and its
    // cache are destroyed before returning and never used for work.
    unsafe {
        if dump.is_some() {
            let cache_info = vk::PipelineCacheCreateInfo::default();
            (fns.v1_0.create_pipeline_cache)(
                device.handle(),
                &cache_info,
                std::ptr::null(),
                &mut cache,
            )
            .result()?;
        }
        (fns.v1_0.create_compute_pipelines)(
            device.handle(),
            cache,
            1,
            &info,
            std::ptr::null(),
            &mut pipeline,
        )
        .result()?;
    }
    let lines = unsafe { statistics(device, pipeline) };
    if let Some(dir) = &dump {
        let stem = file_stem(label);
        if let Err(e) = unsafe { write_dump(device, pipeline, cache, dir, &stem) } {
            eprintln!("[nx_vulkan] pipeline dump {label}: failed ({e})");
        }
    }
    unsafe {
        (fns.v1_0.destroy_pipeline)(device.handle(), pipeline, std::ptr::null());
        if cache != vk::PipelineCache::null() {
            (fns.v1_0.destroy_pipeline_cache)(device.handle(), cache, std::ptr::null());
        }
    }
    lines
}

/// Writes `pipeline`'s internal representations and `cache`'s data into `dir`.
///
/// # Safety
/// `pipeline` is a live pipeline of `device` created with
/// CAPTURE_INTERNAL_REPRESENTATIONS_KHR into the live `cache`.
unsafe fn write_dump(
    device: &Arc<Device>,
    pipeline: ash::vk::Pipeline,
    cache: ash::vk::PipelineCache,
    dir: &std::path::Path,
    stem: &str,
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let fns = device.fns();
    let ext = &fns.khr_pipeline_executable_properties;
    for exe in executables(device, pipeline).map_err(|e| format!("{e:?}"))? {
        let index = exe.executable_index;
        // First the sizes, then the data into buffers of those sizes.
        let mut reps = filled(|n, p| {
            (ext.get_pipeline_executable_internal_representations_khr)(device.handle(), &exe, n, p)
        })
        .map_err(|e| format!("{e:?}"))?;
        let mut n = reps.len() as u32;
        let mut data: Vec<Vec<u8>> = reps.iter().map(|r| vec![0u8; r.data_size]).collect();
        for (r, d) in reps.iter_mut().zip(data.iter_mut()) {
            r.p_data = d.as_mut_ptr().cast();
        }
        (ext.get_pipeline_executable_internal_representations_khr)(
            device.handle(),
            &exe,
            &mut n,
            reps.as_mut_ptr(),
        )
        .result()
        .map_err(|e| format!("{e:?}"))?;
        for (r, d) in reps.iter().zip(&data) {
            let name = CStr::from_ptr(r.name.as_ptr()).to_string_lossy();
            let ext = if r.is_text != 0 { "txt" } else { "bin" };
            let len = if r.is_text != 0 {
                d.iter().position(|&b| b == 0).unwrap_or(d.len())
            } else {
                r.data_size
            };
            let path = dir.join(format!("{stem}.{index}.{}.{ext}", file_stem(&name)));
            std::fs::write(&path, &d[..len]).map_err(|e| e.to_string())?;
        }
        eprintln!("[nx_vulkan] pipeline dump {stem}: executable {index}, {n} representations");
    }
    let mut size = 0usize;
    (fns.v1_0.get_pipeline_cache_data)(device.handle(), cache, &mut size, std::ptr::null_mut())
        .result()
        .map_err(|e| format!("{e:?}"))?;
    let mut blob = vec![0u8; size];
    (fns.v1_0.get_pipeline_cache_data)(device.handle(), cache, &mut size, blob.as_mut_ptr().cast())
        .result()
        .map_err(|e| format!("{e:?}"))?;
    blob.truncate(size);
    std::fs::write(dir.join(format!("{stem}.cache.bin")), &blob).map_err(|e| e.to_string())?;
    Ok(())
}

/// # Safety
/// `pipeline` is a live pipeline of `device` created with CAPTURE_STATISTICS_KHR.
unsafe fn statistics(
    device: &Arc<Device>,
    pipeline: ash::vk::Pipeline,
) -> Result<Vec<String>, ash::vk::Result> {
    use ash::vk;
    let ext = &device.fns().khr_pipeline_executable_properties;
    let mut lines = Vec::new();
    for exe in executables(device, pipeline)? {
        let stats = filled(|n, p| {
            (ext.get_pipeline_executable_statistics_khr)(device.handle(), &exe, n, p)
        })?;
        for s in &stats {
            let name = CStr::from_ptr(s.name.as_ptr()).to_string_lossy();
            let value = match s.format {
                vk::PipelineExecutableStatisticFormatKHR::BOOL32 => s.value.b32.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::INT64 => s.value.i64.to_string(),
                vk::PipelineExecutableStatisticFormatKHR::UINT64 => s.value.u64.to_string(),
                _ => format!("{:.3}", s.value.f64),
            };
            lines.push(format!("{name}={value}"));
        }
    }
    Ok(lines)
}

/// The executables of `pipeline` (a compute pipeline has one; the API allows more).
///
/// # Safety
/// `pipeline` is a live pipeline of `device` created with a capture flag.
unsafe fn executables(
    device: &Arc<Device>,
    pipeline: ash::vk::Pipeline,
) -> Result<Vec<ash::vk::PipelineExecutableInfoKHR<'static>>, ash::vk::Result> {
    use ash::vk;
    let ext = &device.fns().khr_pipeline_executable_properties;
    let info = vk::PipelineInfoKHR {
        pipeline,
        ..Default::default()
    };
    let mut count = 0u32;
    (ext.get_pipeline_executable_properties_khr)(
        device.handle(),
        &info,
        &mut count,
        std::ptr::null_mut(),
    )
    .result()?;
    Ok((0..count)
        .map(|index| vk::PipelineExecutableInfoKHR {
            pipeline,
            executable_index: index,
            ..Default::default()
        })
        .collect())
}

/// The items of a Vulkan query that reports its count first (a null array), then fills an
/// array of that many: `call(count, array)`.
///
/// # Safety
/// `call` must be such a query, safe to call with a null array and with one of `*count`
/// default items.
unsafe fn filled<T: Default + Clone>(
    mut call: impl FnMut(&mut u32, *mut T) -> ash::vk::Result,
) -> Result<Vec<T>, ash::vk::Result> {
    let mut n = 0u32;
    call(&mut n, std::ptr::null_mut()).result()?;
    let mut items = vec![T::default(); n as usize];
    call(&mut n, items.as_mut_ptr()).result()?;
    items.truncate(n as usize);
    Ok(items)
}
