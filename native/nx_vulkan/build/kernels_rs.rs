//! Writes `kernels.rs` (included by `src/kernels/spirv.rs`): one module per variant whose
//! `load` embeds that variant's SPIR-V, and the lookups the engine picks modules by.
use crate::variants::{
    Variant, CODEGEN_LIB, CODEGEN_LIB_PREFIX, COMPLEX_MATH, COMPUTE, F64_MATH, TYPED,
};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// `typed(prefix, suffix)`: the loader of a `TYPED` kernel's module for a compute class.
fn typed_lookup() -> String {
    let mut arms = String::new();
    for (prefix, _) in TYPED {
        for (suffix, _) in COMPUTE {
            writeln!(
                arms,
                "        ({prefix:?}, {suffix:?}) => Some({prefix}_{suffix}::load),"
            )
            .unwrap();
        }
    }
    format!(
        "/// The loader of a typed kernel's module (`unary`, ...) for a compute class (`f32`, ...).\n\
         pub fn typed(prefix: &str, suffix: &str) -> Option<fn(std::sync::Arc<vulkano::device::Device>) -> LoadResult> {{\n    \
         match (prefix, suffix) {{\n{arms}        _ => None,\n    }}\n}}\n"
    )
}

/// `codegen_lib(suffix)`: the SPIR-V of the generated kernels' library for a compute class.
fn codegen_lib_lookup() -> String {
    let mut arms = String::new();
    for (suffix, _) in CODEGEN_LIB {
        writeln!(
            arms,
            "        {suffix:?} => Some({CODEGEN_LIB_PREFIX}{suffix}::BYTES),"
        )
        .unwrap();
    }
    format!(
        "/// The SPIR-V of the generated kernels' function library for a compute class (`f32`, `f32x`, ...).\n\
         pub fn codegen_lib(suffix: &str) -> Option<&'static [u8]> {{\n    \
         match suffix {{\n{arms}        _ => None,\n    }}\n}}\n"
    )
}

/// `f64_math(name)` / `f32_math(name)`: the loader of the library module for an Nx op.
fn math_lookup(prefix: &str, names: &[&str]) -> String {
    let mut arms = String::new();
    for name in names {
        writeln!(arms, "        {name:?} => Some({prefix}_{name}::load),").unwrap();
    }
    format!(
        "/// The loader of the `{prefix}` module for an Nx op name, if there is one.\n\
         pub fn {prefix}(name: &str) -> Option<fn(std::sync::Arc<vulkano::device::Device>) -> LoadResult> {{\n    \
         match name {{\n{arms}        _ => None,\n    }}\n}}\n"
    )
}

/// Writes `out_dir/kernels.rs` for `variants`, whose SPIR-V files are `spv(name)`.
pub fn write(out_dir: &Path, variants: &[Variant], spv: impl Fn(&str) -> PathBuf) {
    let mut modules = String::new();
    for (name, src, defines) in variants {
        let path = spv(name);
        // The generated kernels' libraries are spliced, never loaded as they are.
        let load = if name.starts_with(CODEGEN_LIB_PREFIX) {
            String::new()
        } else {
            "    /// Creates the shader module on `device`.\n    \
             pub fn load(device: std::sync::Arc<vulkano::device::Device>) -> super::LoadResult {\n        \
             super::load(device, BYTES)\n    }\n"
                .to_string()
        };
        writeln!(
            modules,
            "/// `shaders/{src}` with {defines:?}.\npub mod {name} {{\n    \
             /// The module's SPIR-V.\n    \
             pub const BYTES: &[u8] = include_bytes!({path:?});\n{load}}}"
        )
        .unwrap();
    }
    let f64_names: Vec<&str> = F64_MATH.iter().map(|m| m.0).collect();
    modules.push_str(&math_lookup("f64_math", &f64_names));
    let mut f32_names = f64_names.clone();
    f32_names.push("exp_fast");
    modules.push_str(&math_lookup("f32_math", &f32_names));
    let complex_names: Vec<&str> = COMPLEX_MATH.iter().map(|m| m.0).collect();
    modules.push_str(&math_lookup("complex_math", &complex_names));
    modules.push_str(&typed_lookup());
    modules.push_str(&codegen_lib_lookup());
    std::fs::write(out_dir.join("kernels.rs"), modules).unwrap();
}
