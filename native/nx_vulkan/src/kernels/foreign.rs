//! Pipelines from SPIR-V written outside this crate (a caller's own kernels, such as the
//! leapfrog chains eXMC compiles from its generated GLSL). Unlike the engine's kernels,
//! which address buffers through push constants, these bind storage buffers through a
//! descriptor set: the layout is reflected from the module. Pipelines are cached by the
//! SHA-256 of their words, so a rewritten file never reuses a stale pipeline.

use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use vulkano::buffer::Subbuffer;
use vulkano::descriptor_set::allocator::StandardDescriptorSetAllocator;
use vulkano::descriptor_set::layout::DescriptorType;
use vulkano::descriptor_set::{DescriptorSet, WriteDescriptorSet};
use vulkano::device::Device;
use vulkano::pipeline::cache::PipelineCache;
use vulkano::pipeline::compute::ComputePipelineCreateInfo;
use vulkano::pipeline::layout::PipelineDescriptorSetLayoutCreateInfo;
use vulkano::pipeline::{ComputePipeline, PipelineLayout, PipelineShaderStageCreateInfo};
use vulkano::shader::{ShaderModule, ShaderModuleCreateInfo};

/// A pipeline built from foreign SPIR-V, with what its callers need to bind it.
pub struct ForeignPipeline {
    /// The SHA-256 of the module's words: the pipeline's identity (callers may key their
    /// own per-kernel facts by it).
    pub key: [u8; 32],
    pub pipeline: Arc<ComputePipeline>,
    pub layout: Arc<PipelineLayout>,
    /// The storage-buffer bindings of descriptor set 0, ascending.
    pub bindings: Vec<u32>,
    /// Bytes of the module's push-constant block (0 if it has none).
    pub push_bytes: u32,
}

/// The cache of foreign pipelines and the allocator of their descriptor sets.
pub struct Foreign {
    device: Arc<Device>,
    cache: Arc<PipelineCache>,
    cache_use: Arc<RwLock<()>>,
    sets: Arc<StandardDescriptorSetAllocator>,
    pipelines: Mutex<HashMap<[u8; 32], Arc<ForeignPipeline>>>,
}

/// SPIR-V's magic number, first word of every module.
const SPIRV_MAGIC: u32 = 0x0723_0203;

/// The words of a SPIR-V module given as bytes (little- or big-endian, as the spec allows).
pub fn words(bytes: &[u8]) -> Result<Vec<u32>> {
    if bytes.len() < 20 || !bytes.len().is_multiple_of(4) {
        return Err(Error::InvalidArgument(format!(
            "{} bytes are not a SPIR-V module (a whole number of words, at least 5)",
            bytes.len()
        )));
    }
    let le: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match le[0] {
        SPIRV_MAGIC => Ok(le),
        m if m.swap_bytes() == SPIRV_MAGIC => Ok(le.into_iter().map(u32::swap_bytes).collect()),
        m => Err(Error::InvalidArgument(format!(
            "not a SPIR-V module (first word {m:#010x}, expected {SPIRV_MAGIC:#010x})"
        ))),
    }
}

impl Foreign {
    /// An empty cache for `device`, whose pipelines go through the driver's `cache`
    /// (held shared through `cache_use` while building, see `Kernels`).
    pub fn new(
        device: Arc<Device>,
        cache: Arc<PipelineCache>,
        cache_use: Arc<RwLock<()>>,
    ) -> Foreign {
        let sets = Arc::new(StandardDescriptorSetAllocator::new(
            device.clone(),
            Default::default(),
        ));
        Foreign {
            device,
            cache,
            cache_use,
            sets,
            pipelines: Mutex::default(),
        }
    }

    /// The pipeline of the module `words` (entry point `main`), built once per content.
    /// Its descriptor set 0 must hold only storage buffers.
    ///
    /// # Safety
    /// `words` must be valid SPIR-V for this device: vulkano reflects it but does not
    /// validate it, and a malformed module can crash the driver.
    pub unsafe fn pipeline(&self, words: &[u32]) -> Result<Arc<ForeignPipeline>> {
        let mut hash = Sha256::new();
        for w in words {
            hash.update(w.to_le_bytes());
        }
        let key: [u8; 32] = hash.finalize().into();
        if let Some(p) = self.lock().get(&key) {
            return Ok(p.clone());
        }
        crate::nonblocking::may_block("a pipeline build")?;
        let module =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(words)) }?;
        let entry = module.entry_point("main").ok_or_else(|| {
            Error::InvalidArgument("the SPIR-V module has no entry point `main`".into())
        })?;
        let stage = PipelineShaderStageCreateInfo::new(entry);
        let layout_info = PipelineDescriptorSetLayoutCreateInfo::from_stages([&stage])
            .into_pipeline_layout_create_info(self.device.clone())
            .map_err(|e| {
                Error::InvalidArgument(format!("the module's descriptor layout: {e:?}"))
            })?;
        let layout = PipelineLayout::new(self.device.clone(), layout_info)?;
        let bindings = storage_bindings(&layout)?;
        // `Stream::dispatch_with_set` pushes the block from byte 0.
        if layout.push_constant_ranges().iter().any(|r| r.offset != 0) {
            return Err(Error::InvalidArgument(
                "the module's push-constant block must start at offset 0".into(),
            ));
        }
        let push_bytes = layout
            .push_constant_ranges()
            .iter()
            .map(|r| r.offset + r.size)
            .max()
            .unwrap_or(0);
        let pipeline = {
            let _use = self.cache_use.read().unwrap_or_else(|e| e.into_inner());
            ComputePipeline::new(
                self.device.clone(),
                Some(self.cache.clone()),
                ComputePipelineCreateInfo::stage_layout(stage, layout.clone()),
            )?
        };
        let built = Arc::new(ForeignPipeline {
            key,
            pipeline,
            layout,
            bindings,
            push_bytes,
        });
        self.lock().insert(key, built.clone());
        Ok(built)
    }

    /// A descriptor set 0 for `p` binding `buffers[i]` at `p.bindings[i]`.
    pub fn set(
        &self,
        p: &ForeignPipeline,
        buffers: &[Subbuffer<[u8]>],
    ) -> Result<Arc<DescriptorSet>> {
        if buffers.len() != p.bindings.len() {
            return Err(Error::InvalidArgument(format!(
                "the module binds {} storage buffers ({:?}), {} given",
                p.bindings.len(),
                p.bindings,
                buffers.len()
            )));
        }
        let writes = p
            .bindings
            .iter()
            .zip(buffers)
            .map(|(&b, buf)| WriteDescriptorSet::buffer(b, buf.clone()));
        let set_layout = p.layout.set_layouts()[0].clone();
        Ok(DescriptorSet::new(
            self.sets.clone(),
            set_layout,
            writes,
            [],
        )?)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Arc<ForeignPipeline>>> {
        self.pipelines.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The bindings of set 0, which must all be storage buffers (and no other set may exist).
fn storage_bindings(layout: &PipelineLayout) -> Result<Vec<u32>> {
    let sets = layout.set_layouts();
    if sets.len() != 1 {
        return Err(Error::InvalidArgument(format!(
            "the module uses {} descriptor sets; one (set 0) is supported",
            sets.len()
        )));
    }
    let mut bindings = Vec::new();
    for (&b, info) in sets[0].bindings() {
        if info.descriptor_type != DescriptorType::StorageBuffer || info.descriptor_count != 1 {
            return Err(Error::InvalidArgument(format!(
                "binding {b} of the module is {:?} x{}; only single storage buffers are supported",
                info.descriptor_type, info.descriptor_count
            )));
        }
        bindings.push(b);
    }
    bindings.sort_unstable();
    Ok(bindings)
}
