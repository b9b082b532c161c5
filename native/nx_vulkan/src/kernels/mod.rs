//! Kernel registry: the GLSL kernels compiled at build time (one SPIR-V module per compute
//! class or element width) plus SPIR-V registered at run time, each turned into a compute
//! pipeline at most once per process.
//!
//! Every kernel shares one pipeline layout: no descriptor sets and 128 bytes of push
//! constants (the Vulkan minimum), which carry buffer device addresses and sizes.

pub mod cache;
pub mod foreign;
pub(crate) mod spirv;
mod stats;

use crate::dtype::Compute;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};
use vulkano::device::Device;
use vulkano::pipeline::cache::PipelineCache;
use vulkano::pipeline::compute::ComputePipelineCreateInfo;
use vulkano::pipeline::layout::{PipelineLayoutCreateInfo, PushConstantRange};
use vulkano::pipeline::{ComputePipeline, PipelineLayout, PipelineShaderStageCreateInfo};
use vulkano::shader::{ShaderModule, ShaderModuleCreateInfo, ShaderStages, SpecializationConstant};
use vulkano::Validated;
use vulkano::VulkanError;
use vulkano::VulkanObject;

/// Whether `NX_VULKAN_PIPELINE_STATS=1` asks for each pipeline's driver statistics.
pub fn stats_wanted() -> bool {
    stats::wanted()
}

/// Push-constant block size shared by all kernels.
pub const PUSH_BYTES: u32 = 128;
/// Push constants as words.
pub type Push = [u32; (PUSH_BYTES / 4) as usize];

/// A build-time kernel.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Kernel {
    Unary(Compute),
    Binary(Compute),
    Reduce(Compute),
    /// Reduction over a middle block of axes (colreduce.comp).
    ColumnReduce(Compute),
    ArgReduce(Compute),
    /// Window reductions (window.comp).
    Window(Compute),
    Matmul(Compute),
    /// Direct convolution in canonical layout (conv.comp).
    Conv(Compute),
    /// Register-blocked f32 matmul with vec4 access (sgemm.comp); its left operand
    /// stored k-major (a transposed operand read in place) when `true`.
    Sgemm(bool),
    /// f16 matmul on cooperative matrices (hgemm.comp): f16 out, or f32 when `false`;
    /// 128x128 tiles of four 64x64 subgroups when the second is `true`, else of eight
    /// 64x32 ones.
    Hgemm(bool, bool),
    /// bf16 matmul on cooperative matrices (hgemm.comp with BF16): four 64x64 subgroups
    /// per tile when the first is `true`, else eight 64x32; a bf16 result when the second
    /// is `true`, else f32 sums.
    HgemmBf16(bool, bool),
    /// Triangular solve by substitution (trsolve.comp), in f32 or f64, or on complex
    /// values with f32 (C64) or f64 (C128) components.
    TriangularSolve(Compute),
    Index(Compute),
    Sort(Compute),
    /// Complex element-wise ops, conversions and row folds (complex.comp), computing
    /// the components in f32 or f64.
    Complex(Compute),
    /// One transcendental function of complex numbers with f64 components, by Nx op
    /// name (exp, sin, pow, ...): complex.comp built with just that function. (Devices
    /// without f64 have them all in `Complex(F32)`.)
    ComplexMath(&'static str),
    /// Discrete Fourier transform along one axis (dft.comp), in f32 or f64.
    Dft(Compute),
    /// Raw copy of elements of this many bytes (1, 2, 4, 8 or 16).
    Copy(u8),
    /// Tiled copy between layouts contiguous along different axes (transposes), of
    /// elements of this many bytes (1, 2, 4, 8 or 16).
    Transpose(u8),
    /// `select` over elements of this many bytes.
    Select(u8),
    /// `gather` of elements of this many bytes.
    Gather(u8),
    /// `indexed_put` of elements of this many bytes (and its winner pass).
    Scatter(u8),
    /// `indexed_add` into an accumulator.
    ScatterAdd(Accumulator),
    /// One f64 math function, by Nx op name (exp, sin, pow, ...): the unary or binary
    /// kernel built with just that function of the f64 library.
    F64Math(&'static str),
    /// An f32 math function computed in double and rounded once (devices with
    /// shaderFloat64, unless NX_VULKAN_F32_MATH=native): the `f32_math_*` modules of
    /// build/shaders.rs.
    F32ViaF64(&'static str),
    /// A fused program (fused.comp) computing in f32 or f64; the program itself is in
    /// the key's specialization constants (`Source::Specialized`).
    Fused(Compute),
}

/// The accumulator types of `indexed_add`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Accumulator {
    /// 32-bit integers (wrapping; also serves 8- and 16-bit types).
    I32,
    /// 64-bit integers (64-bit atomics).
    I64,
    /// f64 by compare-and-swap (64-bit atomics and shaderFloat64).
    F64,
}

/// What a pipeline is built from.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Source {
    Static(Kernel),
    /// SPIR-V registered at run time under this name.
    Runtime(String),
    /// A build-time kernel given these specialization constants, from id 0 (more than
    /// `KernelKey::spec` holds: fused programs).
    Specialized(Kernel, Vec<u32>),
}

/// A pipeline: its source plus the values of specialization constants 0 and 1.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct KernelKey {
    pub source: Source,
    pub spec: [u32; 2],
}

impl KernelKey {
    /// A short name for profiles: the kernel, its constants where set, and a hash of a
    /// fused program's constants (one name per program).
    fn profile_name(&self) -> String {
        use std::hash::{Hash, Hasher};
        let spec = match self.spec {
            [0, 0] => String::new(),
            [a, b] => format!(" [{a},{b}]"),
        };
        match &self.source {
            Source::Static(k) => format!("{k:?}{spec}"),
            Source::Runtime(name) => format!("{name}{spec}"),
            Source::Specialized(k, values) => {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                values.hash(&mut h);
                format!("{k:?} #{:08x}", h.finish() as u32)
            }
        }
    }
}

impl Kernel {
    /// The module family and compute class of a typed kernel (one module per family
    /// and class, `{family}_{suffix}`); `None` for the other kernels.
    fn typed_family(self) -> Option<(&'static str, Compute)> {
        Some(match self {
            Kernel::Unary(c) => ("unary", c),
            Kernel::Binary(c) => ("binary", c),
            Kernel::Reduce(c) => ("reduce", c),
            Kernel::ColumnReduce(c) => ("colreduce", c),
            Kernel::ArgReduce(c) => ("argreduce", c),
            Kernel::Window(c) => ("window", c),
            Kernel::Matmul(c) => ("matmul", c),
            Kernel::Conv(c) => ("conv", c),
            Kernel::Index(c) => ("index", c),
            Kernel::Sort(c) => ("sort", c),
            _ => return None,
        })
    }
}

type Loader = fn(Arc<Device>) -> std::result::Result<Arc<ShaderModule>, Validated<VulkanError>>;

/// The module of a build-time kernel; `None` for a typed kernel asked for a complex class
/// (only `Kernel::Complex` and `Kernel::Dft` compute complex values).
fn loader(k: Kernel) -> Option<Loader> {
    use spirv::*;
    use Compute::*;
    if let Some((family, c)) = k.typed_family() {
        return typed(family, c.suffix()?);
    }
    Some(match k {
        Kernel::Complex(F64) => complex_f64::load,
        Kernel::Complex(_) => complex_f32::load,
        Kernel::Dft(F64) => dft_f64::load,
        Kernel::Dft(_) => dft_f32::load,
        Kernel::Sgemm(false) => sgemm::load,
        Kernel::Sgemm(true) => sgemm_ak::load,
        Kernel::Hgemm(true, false) => hgemm_f16::load,
        Kernel::Hgemm(false, false) => hgemm_f32::load,
        Kernel::Hgemm(true, true) => hgemm_wide_f16::load,
        Kernel::Hgemm(false, true) => hgemm_wide_f32::load,
        Kernel::HgemmBf16(false, false) => hgemm_bf16_f32::load,
        Kernel::HgemmBf16(true, false) => hgemm_wide_bf16_f32::load,
        Kernel::HgemmBf16(false, true) => hgemm_bf16::load,
        Kernel::HgemmBf16(true, true) => hgemm_wide_bf16::load,
        Kernel::TriangularSolve(F64) => trsolve_f64::load,
        Kernel::TriangularSolve(C64) => trsolve_c64::load,
        Kernel::TriangularSolve(C128) => trsolve_c128::load,
        Kernel::TriangularSolve(_) => trsolve_f32::load,
        Kernel::Copy(1) => copy_w8::load,
        Kernel::Copy(2) => copy_w16::load,
        Kernel::Copy(4) => copy_w32::load,
        Kernel::Copy(8) => copy_w64::load,
        Kernel::Copy(16) => copy_w128::load,
        Kernel::Transpose(1) => transpose_w8::load,
        Kernel::Transpose(2) => transpose_w16::load,
        Kernel::Transpose(4) => transpose_w32::load,
        Kernel::Transpose(8) => transpose_w64::load,
        Kernel::Transpose(16) => transpose_w128::load,
        Kernel::Select(1) => select_w8::load,
        Kernel::Select(2) => select_w16::load,
        Kernel::Select(4) => select_w32::load,
        Kernel::Select(8) => select_w64::load,
        Kernel::Gather(1) => gather_w8::load,
        Kernel::Gather(2) => gather_w16::load,
        Kernel::Gather(4) => gather_w32::load,
        Kernel::Gather(8) => gather_w64::load,
        Kernel::Scatter(1) => scatter_w8::load,
        Kernel::Scatter(2) => scatter_w16::load,
        Kernel::Scatter(4) => scatter_w32::load,
        Kernel::Scatter(8) => scatter_w64::load,
        // Select, gather and scatter have no 16-byte kernel: callers split c128 into
        // planes or report it unsupported (`ops::raw_width`).
        Kernel::Copy(_)
        | Kernel::Transpose(_)
        | Kernel::Select(_)
        | Kernel::Gather(_)
        | Kernel::Scatter(_) => return None,
        Kernel::ScatterAdd(Accumulator::I32) => scatter_add_i32::load,
        Kernel::ScatterAdd(Accumulator::I64) => scatter_add_i64::load,
        Kernel::ScatterAdd(Accumulator::F64) => scatter_add_f64::load,
        Kernel::F64Math(name) => f64_math(name)?,
        Kernel::F32ViaF64(name) => f32_math(name)?,
        Kernel::ComplexMath(name) => complex_math(name)?,
        Kernel::Fused(F64) => fused_f64::load,
        Kernel::Fused(F32) => fused_f32::load,
        Kernel::Fused(_) => return None,
        _ => unreachable!("typed kernels are looked up above"),
    })
}

fn compute_of(k: Kernel) -> Option<Compute> {
    if let Some((_, c)) = k.typed_family() {
        return Some(c);
    }
    match k {
        Kernel::Complex(c) | Kernel::Dft(c) | Kernel::TriangularSolve(c) | Kernel::Fused(c) => {
            Some(c)
        }
        Kernel::ScatterAdd(Accumulator::F64)
        | Kernel::F64Math(_)
        | Kernel::F32ViaF64(_)
        | Kernel::ComplexMath(_) => Some(Compute::F64),
        Kernel::ScatterAdd(Accumulator::I64) => Some(Compute::I64),
        Kernel::Sgemm(_)
        | Kernel::Hgemm(..)
        | Kernel::HgemmBf16(..)
        | Kernel::Copy(_)
        | Kernel::Transpose(_)
        | Kernel::Select(_)
        | Kernel::Gather(_)
        | Kernel::Scatter(_)
        | Kernel::ScatterAdd(Accumulator::I32) => None,
        _ => unreachable!("typed kernels are answered above"),
    }
}

/// Whether f32 products on sgemm.comp run its exact-tile module (each tile proven free of
/// flushed subnormals, or recomputed in f64): on devices with f64 that do not keep f32
/// subnormals, unless `NX_VULKAN_EXACT_TILES=0` (about 5% faster on the H200, and its f32
/// products of subnormal values, or sums below 2^-126, flush to zero there).
pub(crate) fn sgemm_exact_tiles(f64: bool, keeps_f32_denormals: bool) -> bool {
    static EXACT: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let wanted =
        *EXACT.get_or_init(|| std::env::var("NX_VULKAN_EXACT_TILES").map_or(true, |v| v != "0"));
    wanted && f64 && !keeps_f32_denormals
}

type Slot = Arc<Mutex<Option<Arc<ComputePipeline>>>>;

/// Pipelines by key, built on first use.
pub struct Kernels {
    device: Arc<Device>,
    /// Pipelines of SPIR-V from outside the crate, which bind descriptor sets.
    pub foreign: foreign::Foreign,
    /// The driver's pipeline cache every build goes through (see `cache`).
    cache: Arc<PipelineCache>,
    /// Builds hold it shared, a merge into `cache` exclusively (Vulkan requires a merge's
    /// destination to be externally synchronized).
    cache_use: Arc<RwLock<()>>,
    layout: Arc<PipelineLayout>,
    slots: Mutex<HashMap<KernelKey, Slot>>,
    runtime: Mutex<HashMap<String, Arc<ShaderModule>>>,
    built: std::sync::atomic::AtomicU64,
}

impl Kernels {
    /// The registry for `device`, with the shared pipeline layout.
    pub fn new(device: Arc<Device>) -> Result<Kernels> {
        let layout = PipelineLayout::new(
            device.clone(),
            PipelineLayoutCreateInfo {
                push_constant_ranges: vec![PushConstantRange {
                    stages: ShaderStages::COMPUTE,
                    offset: 0,
                    size: PUSH_BYTES,
                }],
                ..Default::default()
            },
        )?;
        let cache = cache::empty(&device)?;
        let cache_use = Arc::new(RwLock::new(()));
        Ok(Kernels {
            foreign: foreign::Foreign::new(device.clone(), cache.clone(), cache_use.clone()),
            cache,
            cache_use,
            device,
            layout,
            slots: Mutex::default(),
            runtime: Mutex::default(),
            built: Default::default(),
        })
    }

    /// The layout every kernel uses.
    pub fn layout(&self) -> &Arc<PipelineLayout> {
        &self.layout
    }

    /// The pipeline cache's data in its persisted form (`cache::persisted`).
    pub fn persisted_cache(&self) -> Result<Vec<u8>> {
        // Not during a merge (which needs the cache to itself).
        let _use = self.cache_use.read().unwrap_or_else(|e| e.into_inner());
        cache::persisted(&self.cache)
    }

    /// Merges a persisted cache into this process's (see `cache::load`); returns the
    /// driver data's size. Foreign or damaged data is an `InvalidArgument` naming why.
    pub fn load_cache(&self, bytes: &[u8], info: &crate::device::DeviceInfo) -> Result<usize> {
        let _merge = self.cache_use.write().unwrap_or_else(|e| e.into_inner());
        cache::load(&self.device, &self.cache, bytes, info)
    }

    /// How many pipelines have been built in this process.
    pub fn built(&self) -> u64 {
        self.built.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Registers SPIR-V generated at run time under `name` (its entry point must be
    /// `main`, with a push-constant block of at most 128 bytes and no descriptors).
    ///
    /// # Safety
    /// `words` must be valid SPIR-V for this device: vulkano does not validate it.
    pub unsafe fn register_spirv(&self, name: &str, words: &[u32]) -> Result<()> {
        let module =
            unsafe { ShaderModule::new(self.device.clone(), ShaderModuleCreateInfo::new(words)) }?;
        self.runtime
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(name.to_string(), module);
        Ok(())
    }

    fn check_features(&self, k: Kernel) -> Result<()> {
        let f = self.device.enabled_features();
        match compute_of(k) {
            Some(Compute::F64 | Compute::C128) if !(f.shader_float64 && f.shader_int64) => {
                Err(Error::Unsupported(format!(
                    "f64 needs shaderFloat64 and shaderInt64, which {} lacks; f32, f16, bf16 \
                     and integer tensors still run on it (Nx.as_type/2 to :f32)",
                    self.device.physical_device().properties().device_name
                )))
            }
            _ if matches!(k, Kernel::ScatterAdd(Accumulator::I64 | Accumulator::F64))
                && !f.shader_buffer_int64_atomics =>
            {
                Err(Error::Unsupported(format!(
                    "indexed_add on 64-bit and float types needs shaderBufferInt64Atomics, \
                     which {} lacks",
                    self.device.physical_device().properties().device_name
                )))
            }
            _ if matches!(k, Kernel::Hgemm(..) | Kernel::HgemmBf16(..))
                && !f.cooperative_matrix =>
            {
                Err(Error::Unsupported(format!(
                    "the f16 and bf16 matmul kernels need VK_KHR_cooperative_matrix, which {} lacks",
                    self.device.physical_device().properties().device_name
                )))
            }
            _ if matches!(k, Kernel::HgemmBf16(..))
                && !crate::device_create::created_with_bf16() =>
            {
                Err(Error::Unsupported(format!(
                    "the bf16 matmul kernel needs VK_KHR_shader_bfloat16, which {} lacks",
                    self.device.physical_device().properties().device_name
                )))
            }
            Some(Compute::I64 | Compute::U64) if !f.shader_int64 => {
                Err(Error::Unsupported(format!(
                    "64-bit integers need shaderInt64, which {} lacks; 32-bit and smaller \
                     integers and f32 still run on it",
                    self.device.physical_device().properties().device_name
                )))
            }
            _ => Ok(()),
        }
    }

    /// The pipeline for a build-time kernel specialised with `spec`.
    pub fn get(&self, k: Kernel, spec: [u32; 2]) -> Result<Arc<ComputePipeline>> {
        self.get_key(&KernelKey {
            source: Source::Static(k),
            spec,
        })
    }

    /// The pipeline for any key, built once.
    pub fn get_key(&self, key: &KernelKey) -> Result<Arc<ComputePipeline>> {
        let slot = {
            let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = slots.get(key) {
                let ready = match s.try_lock() {
                    Ok(p) => p.clone(),
                    Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner().clone(),
                    // Being built by another thread: wait below, without the map's lock.
                    Err(std::sync::TryLockError::WouldBlock) => None,
                };
                if let Some(p) = ready {
                    return Ok(p);
                }
                crate::nonblocking::may_block("a pipeline build")?;
                s.clone()
            } else {
                crate::nonblocking::may_block("a pipeline build")?;
                let s: Slot = Arc::default();
                slots.insert(key.clone(), s.clone());
                s
            }
        };
        // Built under the slot's own lock: other kernels can be built meanwhile, and two
        // threads wanting the same kernel build it once.
        let mut guard = slot.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = guard.as_ref() {
            return Ok(p.clone());
        }
        let module = match &key.source {
            Source::Static(k) | Source::Specialized(k, _) => {
                self.check_features(*k)?;
                // With f64 available, f32 division and sqrt are computed through it.
                let f64_ok = self.device.enabled_features().shader_float64;
                let load = match k {
                    Kernel::Unary(Compute::F32) if f64_ok => spirv::unary_f32x::load,
                    Kernel::Binary(Compute::F32) if f64_ok => spirv::binary_f32x::load,
                    Kernel::Fused(Compute::F32) if f64_ok => spirv::fused_f32x::load,
                    // Tiles that cannot prove their f32 result free of flushed subnormals
                    // are recomputed in f64 (sgemm.comp), where the device may flush them.
                    Kernel::Sgemm(a_kmajor)
                        if sgemm_exact_tiles(
                            f64_ok,
                            spirv::keeps_f32_denormals(self.device.physical_device()),
                        ) =>
                    {
                        if *a_kmajor {
                            spirv::sgemm_ak_x::load
                        } else {
                            spirv::sgemm_x::load
                        }
                    }
                    _ => loader(*k).ok_or_else(|| {
                        Error::Unsupported(format!("{k:?} has no Vulkan kernel yet"))
                    })?,
                };
                load(self.device.clone())?
            }
            Source::Runtime(name) => self
                .runtime
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get(name)
                .cloned()
                .ok_or_else(|| {
                    Error::InvalidArgument(format!("no runtime kernel named {name:?}"))
                })?,
        };
        // Constants 0 and 1 are set when the module declares them (specialising a module
        // with constants it lacks is an error in vulkano).
        let declared: Vec<u32> = module.specialization_constants().keys().copied().collect();
        let spec: &[u32] = match &key.source {
            Source::Specialized(_, values) => values,
            _ => &key.spec,
        };
        let pairs: Vec<(u32, u32)> = spec
            .iter()
            .enumerate()
            .filter(|(id, _)| declared.contains(&(*id as u32)))
            .map(|(id, &v)| (id as u32, v))
            .collect();
        // The device enables the statistics feature only when they were asked for.
        if self.device.enabled_features().pipeline_executable_info {
            stats::report(
                &self.device,
                &self.layout,
                &module,
                &pairs,
                &format!("{key:?}"),
            );
        }
        let values = pairs
            .iter()
            .map(|&(id, v)| (id, SpecializationConstant::U32(v)))
            .collect();
        let entry = module
            .specialize(values)?
            .entry_point("main")
            .ok_or_else(|| Error::Vulkan(format!("kernel {key:?} has no entry point main")))?;
        let stage = PipelineShaderStageCreateInfo::new(entry);
        let pipeline = {
            let _use = self.cache_use.read().unwrap_or_else(|e| e.into_inner());
            ComputePipeline::new(
                self.device.clone(),
                Some(self.cache.clone()),
                ComputePipelineCreateInfo::stage_layout(stage, self.layout.clone()),
            )?
        };
        self.built
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        crate::exec_profile::name_pipeline(ash::vk::Handle::as_raw(pipeline.handle()), || {
            key.profile_name()
        });
        *guard = Some(pipeline.clone());
        Ok(pipeline)
    }
}
