//! `NX_VULKAN_PIPELINE_STATS=1`: the driver's statistics of each compute pipeline the
//! registry builds (register count, shared and local memory, ...), printed to stderr, on
//! devices with `VK_KHR_pipeline_executable_properties` (NVIDIA's, AMD's and Intel's
//! drivers; not lavapipe). A tuning aid: a kernel whose registers grow past an occupancy
//! step, or that spills to local memory, shows it here.
//!
//! vulkano does not expose the capture flag, so a second pipeline is built with raw
//! Vulkan calls from the same module, layout and specialization, and destroyed after its
//! statistics are read.
use std::ffi::CStr;
use std::sync::Arc;
use vulkano::device::Device;
use vulkano::pipeline::PipelineLayout;
use vulkano::shader::ShaderModule;
use vulkano::VulkanObject;

/// Whether statistics were asked for (`NX_VULKAN_PIPELINE_STATS=1`).
pub fn wanted() -> bool {
    std::env::var("NX_VULKAN_PIPELINE_STATS").is_ok_and(|v| v == "1")
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
    match capture(device, layout, module, values) {
        Ok(lines) => eprintln!("[nx_vulkan] pipeline stats {label}: {}", lines.join(", ")),
        Err(e) => eprintln!("[nx_vulkan] pipeline stats {label}: failed ({e:?})"),
    }
}

fn capture(
    device: &Arc<Device>,
    layout: &PipelineLayout,
    module: &ShaderModule,
    values: &[(u32, u32)],
) -> Result<Vec<String>, ash::vk::Result> {
    use ash::vk;
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
    let info = vk::ComputePipelineCreateInfo {
        flags: vk::PipelineCreateFlags::CAPTURE_STATISTICS_KHR,
        stage,
        layout: layout.handle(),
        ..Default::default()
    };
    let fns = device.fns();
    let mut pipeline = vk::Pipeline::null();
    // SAFETY: every pointer refers to locals that outlive the calls; the pipeline is
    // destroyed before returning and never used for work.
    unsafe {
        (fns.v1_0.create_compute_pipelines)(
            device.handle(),
            vk::PipelineCache::null(),
            1,
            &info,
            std::ptr::null(),
            &mut pipeline,
        )
        .result()?;
    }
    let lines = unsafe { statistics(device, pipeline) };
    unsafe { (fns.v1_0.destroy_pipeline)(device.handle(), pipeline, std::ptr::null()) };
    lines
}

/// # Safety
/// `pipeline` is a live pipeline of `device` created with CAPTURE_STATISTICS_KHR.
unsafe fn statistics(
    device: &Arc<Device>,
    pipeline: ash::vk::Pipeline,
) -> Result<Vec<String>, ash::vk::Result> {
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
    let mut lines = Vec::new();
    for index in 0..count {
        let exe = vk::PipelineExecutableInfoKHR {
            pipeline,
            executable_index: index,
            ..Default::default()
        };
        let mut n = 0u32;
        (ext.get_pipeline_executable_statistics_khr)(
            device.handle(),
            &exe,
            &mut n,
            std::ptr::null_mut(),
        )
        .result()?;
        let mut stats = vec![vk::PipelineExecutableStatisticKHR::default(); n as usize];
        (ext.get_pipeline_executable_statistics_khr)(
            device.handle(),
            &exe,
            &mut n,
            stats.as_mut_ptr(),
        )
        .result()?;
        for s in &stats[..n as usize] {
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
