//! The `shaderc` feature: compiles the GLSL of a shader folder to optimised SPIR-V with
//! shaderc (glslang and SPIRV-Tools built from the crate's bundled sources; the compiler
//! vulkano-shaders wraps, which offers no optimisation level). Only someone who edits a
//! shader needs it: default builds embed the shipped SPIR-V (`spirv_store.rs`).
use crate::variants::Variant;
use shaderc::{
    CompileOptions, Compiler, EnvVersion, IncludeType, OptimizationLevel, ResolvedInclude,
    ShaderKind, SpirvVersion, TargetEnv,
};
use std::collections::HashMap;
use std::path::Path;

/// Resolves `#include "relative"` against the including file's directory.
fn include(requested: &str, from: &str) -> Result<ResolvedInclude, String> {
    let base = Path::new(from).parent().unwrap_or(Path::new("."));
    let path = base.join(requested);
    let content = std::fs::read_to_string(&path)
        .map_err(|e| format!("#include {requested:?} from {from}: {e}"))?;
    Ok(ResolvedInclude {
        resolved_name: path.to_string_lossy().into_owned(),
        content,
    })
}

/// The optimisation level: NX_VULKAN_SHADER_OPT=0 keeps shaderc's unoptimised SPIR-V (to
/// compare what drivers make of each). Returns whether it is the shipped level.
pub fn optimization_level() -> (OptimizationLevel, bool) {
    println!("cargo::rerun-if-env-changed=NX_VULKAN_SHADER_OPT");
    match std::env::var("NX_VULKAN_SHADER_OPT").as_deref() {
        Ok("0") => (OptimizationLevel::Zero, false),
        _ => (OptimizationLevel::Performance, true),
    }
}

/// Compiles one variant of `shader_dir`.
fn compile(
    compiler: &Compiler,
    level: OptimizationLevel,
    shader_dir: &Path,
    (name, src, defines): &Variant,
) -> Vec<u8> {
    let path = shader_dir.join(src);
    let code = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let mut options = CompileOptions::new().expect("shaderc: no options");
    options.set_target_env(TargetEnv::Vulkan, EnvVersion::Vulkan1_2 as u32);
    options.set_target_spirv(SpirvVersion::V1_5);
    // The library of generated kernels stays unoptimised: optimising inlines its functions
    // into its placeholder `main` and drops them.
    if name.starts_with(crate::variants::CODEGEN_LIB_PREFIX) {
        options.set_optimization_level(OptimizationLevel::Zero);
    } else {
        options.set_optimization_level(level);
    }
    options.set_include_callback(|requested, ty, from, _depth| match ty {
        IncludeType::Relative => include(requested, from),
        IncludeType::Standard => Err(format!("#include <{requested}>: use quotes")),
    });
    for d in defines {
        // "NAME" defines NAME as 1, "NAME=VALUE" as VALUE.
        let (key, value) = d.split_once('=').unwrap_or((d.as_str(), "1"));
        options.add_macro_definition(key, Some(value));
    }
    let file = path.to_string_lossy();
    compiler
        .compile_into_spirv(&code, ShaderKind::Compute, &file, "main", Some(&options))
        .unwrap_or_else(|e| panic!("compiling {name} ({src} {defines:?}):\n{e}"))
        .as_binary_u8()
        .to_vec()
}

/// Compiles every variant (one compiler per core, as the f64 math modules take most of
/// the time): module name → SPIR-V.
pub fn compile_all(
    shader_dir: &Path,
    variants: &[Variant],
    level: OptimizationLevel,
) -> HashMap<String, Vec<u8>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let compiler = Compiler::new().expect("shaderc: no compiler");
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(v) = variants.get(i) else { break done };
                        done.push((v.0.clone(), compile(&compiler, level, shader_dir, v)));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("a shader compile thread panicked"))
            .collect()
    })
}
