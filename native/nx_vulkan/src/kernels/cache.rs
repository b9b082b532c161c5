//! The driver's pipeline cache, shared by every pipeline the engine builds, and its
//! persisted form. A process that loads the data of an earlier one skips the driver's
//! compilation of each kernel it had built (7-125 ms each on lavapipe).
//!
//! The persisted bytes are a header of ours (magic, payload length, SHA-256 of the payload)
//! followed by the driver's data, whose own header (Vulkan's
//! `VkPipelineCacheHeaderVersionOne`: vendor, device, pipeline-cache UUID) must match this
//! device: data from another device or driver is refused as foreign, and damaged data as
//! corrupt, before the driver ever sees it (drivers trust cache data blindly).

use crate::device::DeviceInfo;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use vulkano::device::Device;
use vulkano::pipeline::cache::{PipelineCache, PipelineCacheCreateInfo};

const MAGIC: &[u8; 8] = b"NXVKPC01";
const OUR_HEADER: usize = 8 + 8 + 32;
/// `VkPipelineCacheHeaderVersionOne`: length, version, vendor, device, UUID.
const VK_HEADER: usize = 16 + 16;

/// A new, empty cache for `device`.
pub fn empty(device: &Arc<Device>) -> Result<Arc<PipelineCache>> {
    // SAFETY: no initial data.
    Ok(unsafe { PipelineCache::new(device.clone(), PipelineCacheCreateInfo::default()) }?)
}

/// The persisted form of `cache`'s current data.
pub fn persisted(cache: &PipelineCache) -> Result<Vec<u8>> {
    let data = cache.get_data().map_err(|e| Error::Vulkan(e.to_string()))?;
    let mut out = Vec::with_capacity(OUR_HEADER + data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(&data));
    out.extend_from_slice(&data);
    Ok(out)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// The driver's data inside `bytes` (a persisted cache), if it is whole and this device's.
/// The error names what is wrong: not a cache of ours, damaged, or another device's.
pub fn payload<'a>(bytes: &'a [u8], info: &DeviceInfo) -> Result<&'a [u8]> {
    let invalid = |m: String| Err(Error::InvalidArgument(m));
    if bytes.len() < OUR_HEADER || &bytes[..8] != MAGIC {
        return invalid("not an Nx.Vulkan pipeline cache (no NXVKPC01 header)".into());
    }
    let len = u64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes")) as usize;
    let data = &bytes[OUR_HEADER..];
    if data.len() != len || Sha256::digest(data)[..] != bytes[16..48] {
        return invalid("corrupt pipeline cache (length or checksum mismatch)".into());
    }
    if data.len() < VK_HEADER || (u32_at(data, 0) as usize) < VK_HEADER || u32_at(data, 4) != 1 {
        return invalid("corrupt pipeline cache (no driver header)".into());
    }
    let (vendor, device, uuid) = (u32_at(data, 8), u32_at(data, 12), &data[16..32]);
    if vendor != info.vendor_id || device != info.device_id || uuid != info.pipeline_cache_uuid {
        return invalid(format!(
            "a pipeline cache of another device or driver (vendor {vendor:#x}, device {device:#x}, \
             cache UUID {}; this one is {:#x}, {:#x}, {})",
            crate::device::hex(uuid),
            info.vendor_id,
            info.device_id,
            crate::device::hex(&info.pipeline_cache_uuid)
        ));
    }
    Ok(data)
}

/// Merges the persisted cache `bytes` into `cache`, after `payload`'s checks; returns the
/// driver data's size.
pub fn load(
    device: &Arc<Device>,
    cache: &PipelineCache,
    bytes: &[u8],
    info: &DeviceInfo,
) -> Result<usize> {
    let data = payload(bytes, info)?;
    // SAFETY: the data is whole (checksum) and was written by this device's driver
    // (its header matches); the driver validates the rest.
    let loaded = unsafe {
        PipelineCache::new(
            device.clone(),
            PipelineCacheCreateInfo {
                initial_data: data.to_vec(),
                ..Default::default()
            },
        )
    }?;
    cache.merge([loaded.as_ref()])?;
    Ok(data.len())
}
