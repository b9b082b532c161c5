//! Build script: embeds the kernels' SPIR-V (see `spirv_store.rs`; with the `shaderc`
//! feature, compiles it from the GLSL first, see `glsl.rs`) and gives test and example
//! binaries a linker script for the Erlang NIF API (see `no_beam.rs`); macOS releases link
//! MoltenVK (see `moltenvk.rs`).
#[cfg(feature = "shaderc")]
mod glsl;
mod kernels_rs;
mod moltenvk;
mod no_beam;
mod spirv_store;
mod variants;

use spirv_store::Store;
use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let shader_dir = normalised(&manifest.join("../../shaders"));
    let kernels = Store::new(&shader_dir);
    let variants = variants::variants();
    let spv_dir = prepare(&kernels, &variants, &out.join("spirv"));
    kernels_rs::write(&out, &variants, |name| spv_dir.join(format!("{name}.spv")));
    // Test-only kernels (tests/chain.rs embeds them); absent from the Hex package.
    let test_dir = manifest.join("tests/shaders");
    if test_dir.is_dir() {
        let test_store = Store::new(&test_dir);
        prepare(
            &test_store,
            &variants::test_variants(&test_dir),
            &out.join("test_spirv"),
        );
        println!("cargo::rerun-if-changed={}", test_dir.display());
    }
    no_beam::write_linker_script(&out, &manifest);
    moltenvk::link();
    println!("cargo::rerun-if-changed={}", shader_dir.display());
    println!("cargo::rerun-if-changed=build");
}

fn normalised(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// Default build: checks the shipped SPIR-V against the sources; returns its folder.
#[cfg(not(feature = "shaderc"))]
fn prepare(store: &Store, variants: &[variants::Variant], _scratch: &Path) -> PathBuf {
    store.verify(variants);
    store.dir.clone()
}

/// `shaderc` feature: compiles the GLSL. With NX_VULKAN_UPDATE_SPIRV=1 the result becomes
/// the shipped SPIR-V; otherwise the build fails if the shipped files differ from it (the
/// CI check that no stale SPIR-V is shipped). NX_VULKAN_SHADER_OPT=0 builds embed the
/// unoptimised modules from `scratch` instead. Returns the folder of the modules to embed.
#[cfg(feature = "shaderc")]
fn prepare(store: &Store, variants: &[variants::Variant], scratch: &Path) -> PathBuf {
    println!("cargo::rerun-if-env-changed=NX_VULKAN_UPDATE_SPIRV");
    let (level, shipped_level) = glsl::optimization_level();
    let compiled = glsl::compile_all(&store.shader_dir, variants, level);
    let update = std::env::var("NX_VULKAN_UPDATE_SPIRV").is_ok_and(|v| v == "1");
    if update {
        assert!(
            shipped_level,
            "NX_VULKAN_UPDATE_SPIRV with NX_VULKAN_SHADER_OPT=0: the shipped SPIR-V is optimised"
        );
        store.update(variants, &compiled);
    } else if !shipped_level {
        std::fs::create_dir_all(scratch).unwrap();
        for (name, bytes) in &compiled {
            std::fs::write(scratch.join(format!("{name}.spv")), bytes).unwrap();
        }
        return scratch.to_path_buf();
    } else {
        let differs = store.differs(&compiled);
        assert!(
            differs.is_empty(),
            "shaderc's SPIR-V differs from the shipped files in {} for {} module(s): {}. \
             Run `{}` and commit the result.",
            store.dir.display(),
            differs.len(),
            differs
                .iter()
                .take(8)
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            spirv_store::REGENERATE
        );
    }
    store.verify(variants);
    store.dir.clone()
}
