//! Build script: compiles the GLSL kernels (see `shaders.rs`) and gives test and example
//! binaries a linker script for the Erlang NIF API (see `no_beam.rs`).
mod no_beam;
mod shaders;

fn main() {
    let manifest = std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let shader_dir = manifest.join("../../shaders");
    shaders::compile_all(&shader_dir, &out);
    let test_shader_dir = manifest.join("tests/shaders");
    shaders::compile_test_shaders(&test_shader_dir, &out);
    println!("cargo::rerun-if-changed={}", test_shader_dir.display());
    no_beam::write_linker_script(&out);
    println!("cargo::rerun-if-changed={}", shader_dir.display());
    println!("cargo::rerun-if-changed=build");
}
