//! Every (kernel, defines) variant the engine loads: the one table that the shipped SPIR-V
//! (`shaders/spirv/`), the shaderc build (`glsl.rs`) and the generated `kernels.rs` share.

/// A compiled module: its name, its source under the shader folder, its defines.
pub type Variant = (String, &'static str, Vec<String>);

/// The six compute classes a typed kernel is built for, with the suffix of its module.
pub const COMPUTE: [(&str, &str); 6] = [
    ("f32", "CT_F32"),
    ("f64", "CT_F64"),
    ("i32", "CT_I32"),
    ("u32", "CT_U32"),
    ("i64", "CT_I64"),
    ("u64", "CT_U64"),
];

/// Kernels built once per compute class: (module prefix, source under `shaders/`).
pub const TYPED: [(&str, &str); 10] = [
    ("unary", "elementwise/unary.comp"),
    ("binary", "elementwise/binary.comp"),
    ("reduce", "reduce/reduce.comp"),
    ("colreduce", "reduce/colreduce.comp"),
    ("argreduce", "reduce/argreduce.comp"),
    ("window", "reduce/window.comp"),
    ("matmul", "linalg/matmul.comp"),
    ("conv", "linalg/conv.comp"),
    ("index", "creation/index.comp"),
    ("sort", "sort/sort.comp"),
];

/// Other variants: (module, source, defines).
const OTHER: [(&str, &str, &[&str]); 50] = [
    // Complex numbers: element-wise ops and row folds, and the DFT, computing in f32 or f64.
    // Devices without f64: c64 in f32, every complex function in the one module.
    (
        "complex_f32",
        "complex/complex.comp",
        &[
            "CT_F32",
            "COMPLEX_MATH",
            "COMPLEX_MATH_UNARY=op",
            "COMPLEX_MATH_POW",
        ],
    ),
    ("complex_f64", "complex/complex.comp", &["CT_F64"]),
    ("dft_f32", "complex/dft.comp", &["CT_F32"]),
    ("dft_f64", "complex/dft.comp", &["CT_F64"]),
    // f32 element-wise kernels whose division and sqrt go through f64 (correctly rounded
    // where drivers' f32 ones are not); used on devices with shaderFloat64.
    (
        "unary_f32x",
        "elementwise/unary.comp",
        &["CT_F32", "EXACT_VIA_F64"],
    ),
    (
        "binary_f32x",
        "elementwise/binary.comp",
        &["CT_F32", "EXACT_VIA_F64"],
    ),
    // Fused programs (ops/fused.rs); f32x: f32 math in double, on devices with f64.
    ("fused_f32", "fused/fused.comp", &["CT_F32", "FUSED"]),
    (
        "fused_f32x",
        "fused/fused.comp",
        &["CT_F32", "EXACT_VIA_F64", "FUSED"],
    ),
    ("fused_f64", "fused/fused.comp", &["CT_F64", "FUSED"]),
    ("sgemm", "linalg/sgemm.comp", &[]),
    // With exact tiles: for devices with f64 that may flush f32 subnormals.
    ("sgemm_x", "linalg/sgemm.comp", &["CT_F32", "EXACT_VIA_F64"]),
    // A stored k-major (a transposed left operand read in place), without and with exact
    // tiles.
    ("sgemm_ak", "linalg/sgemm.comp", &["A_KMAJOR"]),
    (
        "sgemm_ak_x",
        "linalg/sgemm.comp",
        &["CT_F32", "EXACT_VIA_F64", "A_KMAJOR"],
    ),
    // f16 matmul on cooperative matrices: f16 result, or f32 partial sums of a split K;
    // 128x128 tiles of eight 64x32 subgroups, or of four 64x64 ones ("wide").
    ("hgemm_f16", "linalg/hgemm.comp", &["OUT_F16"]),
    ("hgemm_f32", "linalg/hgemm.comp", &[]),
    (
        "hgemm_wide_f16",
        "linalg/hgemm.comp",
        &["OUT_F16", "WN=64", "WARPS_N=2"],
    ),
    (
        "hgemm_wide_f32",
        "linalg/hgemm.comp",
        &["WN=64", "WARPS_N=2"],
    ),
    // bf16 operands (VK_KHR_shader_bfloat16): bf16 results (each sum rounded to nearest
    // even by the kernel), or f32 sums.
    ("hgemm_bf16", "linalg/hgemm.comp", &["BF16", "OUT_BF16"]),
    ("hgemm_bf16_f32", "linalg/hgemm.comp", &["BF16"]),
    (
        "hgemm_wide_bf16",
        "linalg/hgemm.comp",
        &["BF16", "OUT_BF16", "WN=64", "WARPS_N=2"],
    ),
    (
        "hgemm_wide_bf16_f32",
        "linalg/hgemm.comp",
        &["BF16", "WN=64", "WARPS_N=2"],
    ),
    ("trsolve_f32", "linalg/trsolve.comp", &["CT_F32"]),
    ("trsolve_f64", "linalg/trsolve.comp", &["CT_F64"]),
    ("trsolve_c64", "linalg/trsolve.comp", &["CT_F32", "COMPLEX"]),
    (
        "trsolve_c128",
        "linalg/trsolve.comp",
        &["CT_F64", "COMPLEX"],
    ),
    ("copy_w8", "movement/copy.comp", &["W8"]),
    ("copy_w16", "movement/copy.comp", &["W16"]),
    ("copy_w32", "movement/copy.comp", &["W32"]),
    ("copy_w64", "movement/copy.comp", &["W64"]),
    ("copy_w128", "movement/copy.comp", &["W128"]),
    ("transpose_w8", "movement/transpose.comp", &["W8"]),
    ("transpose_w16", "movement/transpose.comp", &["W16"]),
    ("transpose_w32", "movement/transpose.comp", &["W32"]),
    ("transpose_w64", "movement/transpose.comp", &["W64"]),
    ("transpose_w128", "movement/transpose.comp", &["W128"]),
    ("select_w8", "elementwise/select.comp", &["W8"]),
    ("select_w16", "elementwise/select.comp", &["W16"]),
    ("select_w32", "elementwise/select.comp", &["W32"]),
    ("select_w64", "elementwise/select.comp", &["W64"]),
    ("gather_w8", "indexing/gather.comp", &["W8"]),
    ("gather_w16", "indexing/gather.comp", &["W16"]),
    ("gather_w32", "indexing/gather.comp", &["W32"]),
    ("gather_w64", "indexing/gather.comp", &["W64"]),
    ("scatter_w8", "indexing/scatter.comp", &["W8"]),
    ("scatter_w16", "indexing/scatter.comp", &["W16"]),
    ("scatter_w32", "indexing/scatter.comp", &["W32"]),
    ("scatter_w64", "indexing/scatter.comp", &["W64"]),
    ("scatter_add_i32", "indexing/scatter.comp", &["W32", "ADD"]),
    ("scatter_add_i64", "indexing/scatter.comp", &["W64", "ADD"]),
    (
        "scatter_add_f64",
        "indexing/scatter.comp",
        &["W64", "ADD", "FLOAT_ADD"],
    ),
];

/// The f64 math library (shaders/common/math64*.glsl), one module per function: drivers
/// inline every function a module calls before specialising its op, so a module holding
/// all of them made each f64 pipeline slow to build. (Nx name, source, op code macro,
/// GLSL function); the engine picks a module by the Nx name (`Kernel::F64Math`).
pub const F64_MATH: [(&str, &str, &str, &str); 24] = [
    ("exp", "elementwise/unary.comp", "U_EXP", "f64_exp"),
    ("expm1", "elementwise/unary.comp", "U_EXPM1", "f64_expm1"),
    ("log", "elementwise/unary.comp", "U_LOG", "f64_log"),
    ("log1p", "elementwise/unary.comp", "U_LOG1P", "f64_log1p"),
    (
        "sigmoid",
        "elementwise/unary.comp",
        "U_SIGMOID",
        "f64_sigmoid",
    ),
    ("sin", "elementwise/unary.comp", "U_SIN", "f64_sin"),
    ("cos", "elementwise/unary.comp", "U_COS", "f64_cos"),
    ("tan", "elementwise/unary.comp", "U_TAN", "f64_tan"),
    ("sinh", "elementwise/unary.comp", "U_SINH", "f64_sinh"),
    ("cosh", "elementwise/unary.comp", "U_COSH", "f64_cosh"),
    ("tanh", "elementwise/unary.comp", "U_TANH", "f64_tanh"),
    ("asin", "elementwise/unary.comp", "U_ASIN", "f64_asin"),
    ("acos", "elementwise/unary.comp", "U_ACOS", "f64_acos"),
    ("atan", "elementwise/unary.comp", "U_ATAN", "f64_atan"),
    ("asinh", "elementwise/unary.comp", "U_ASINH", "f64_asinh"),
    ("acosh", "elementwise/unary.comp", "U_ACOSH", "f64_acosh"),
    ("atanh", "elementwise/unary.comp", "U_ATANH", "f64_atanh"),
    ("rsqrt", "elementwise/unary.comp", "U_RSQRT", "f64_rsqrt"),
    ("cbrt", "elementwise/unary.comp", "U_CBRT", "f64_cbrt"),
    ("erf", "elementwise/unary.comp", "U_ERF", "f64_erf"),
    ("erfc", "elementwise/unary.comp", "U_ERFC", "f64_erfc"),
    (
        "erf_inv",
        "elementwise/unary.comp",
        "U_ERF_INV",
        "f64_erf_inv",
    ),
    ("pow", "elementwise/binary.comp", "B_POW", "f64_pow"),
    ("atan2", "elementwise/binary.comp", "B_ATAN2", "f64_atan2"),
];

/// Transcendental functions of complex numbers with f64 components, one module each
/// (`complex_math_{name}`, `Kernel::ComplexMath`): (Nx name, the define that selects it).
pub const COMPLEX_MATH: [(&str, &str); 20] = [
    ("exp", "COMPLEX_MATH_UNARY=U_EXP"),
    ("expm1", "COMPLEX_MATH_UNARY=U_EXPM1"),
    ("log", "COMPLEX_MATH_UNARY=U_LOG"),
    ("log1p", "COMPLEX_MATH_UNARY=U_LOG1P"),
    ("sigmoid", "COMPLEX_MATH_UNARY=U_SIGMOID"),
    ("sin", "COMPLEX_MATH_UNARY=U_SIN"),
    ("cos", "COMPLEX_MATH_UNARY=U_COS"),
    ("tan", "COMPLEX_MATH_UNARY=U_TAN"),
    ("sinh", "COMPLEX_MATH_UNARY=U_SINH"),
    ("cosh", "COMPLEX_MATH_UNARY=U_COSH"),
    ("tanh", "COMPLEX_MATH_UNARY=U_TANH"),
    ("asin", "COMPLEX_MATH_UNARY=U_ASIN"),
    ("acos", "COMPLEX_MATH_UNARY=U_ACOS"),
    ("atan", "COMPLEX_MATH_UNARY=U_ATAN"),
    ("asinh", "COMPLEX_MATH_UNARY=U_ASINH"),
    ("acosh", "COMPLEX_MATH_UNARY=U_ACOSH"),
    ("atanh", "COMPLEX_MATH_UNARY=U_ATANH"),
    ("rsqrt", "COMPLEX_MATH_UNARY=U_RSQRT"),
    ("cbrt", "COMPLEX_MATH_UNARY=U_CBRT"),
    ("pow", "COMPLEX_MATH_POW"),
];

// Every library function also gets an f32 module (`f32_math_{name}`,
// `Kernel::F32ViaF64`): f32/f16/bf16 computed in double and rounded once, which the
// engine uses on devices with shaderFloat64 (unless NX_VULKAN_F32_MATH=native).
// The drivers' f32 built-ins gave 3^2 = 9.0000005 (exp2/log2) and, on NVIDIA,
// sin(8388609) = 0, and are a few ulps off elsewhere.

/// The function library of generated kernels (shaders/codegen/lib.comp), one module per
/// compute class: (module suffix, defines). Compiled unoptimised (`glsl.rs`), so its
/// functions stay functions; f32x is f32 with division and sqrt through f64, for devices
/// with shaderFloat64, as `binary_f32x`.
pub const CODEGEN_LIB: [(&str, &[&str]); 7] = [
    ("f32", &["CT_F32"]),
    ("f32x", &["CT_F32", "EXACT_VIA_F64"]),
    ("f64", &["CT_F64"]),
    ("i32", &["CT_I32"]),
    ("u32", &["CT_U32"]),
    ("i64", &["CT_I64"]),
    ("u64", &["CT_U64"]),
];

/// The module name prefix of `CODEGEN_LIB`'s modules.
pub const CODEGEN_LIB_PREFIX: &str = "codegen_lib_";

/// Every variant: (module name, source path relative to `shaders/`, defines).
pub fn variants() -> Vec<Variant> {
    let mut v = Vec::new();
    for (suffix, defines) in CODEGEN_LIB {
        let defines = defines.iter().map(|d| d.to_string()).collect();
        v.push((
            format!("{CODEGEN_LIB_PREFIX}{suffix}"),
            "codegen/lib.comp",
            defines,
        ));
    }
    for (prefix, src) in TYPED {
        for (suffix, define) in COMPUTE {
            v.push((format!("{prefix}_{suffix}"), src, vec![define.to_string()]));
        }
    }
    for (name, src, defines) in OTHER {
        let defines = defines.iter().map(|d| d.to_string()).collect();
        v.push((name.to_string(), src, defines));
    }
    for (name, src, op, function) in F64_MATH {
        let defines = vec![
            "CT_F64".to_string(),
            format!("F64_MATH_OP={op}"),
            format!("F64_MATH_FN={function}"),
        ];
        v.push((format!("f64_math_{name}"), src, defines));
        // f32 erf_inv: Nx's own single-precision formula in double (f64_erf_inv starts
        // from it and iterates to the exact value). The trigonometric functions keep
        // the double-double library (their argument reduction needs it); the others
        // run in plain double (shaders/common/math32x.glsl, F32X).
        let mut defines = vec!["CT_F32".to_string(), "EXACT_VIA_F64".to_string()];
        let f32_function = match function {
            "f64_erf_inv" => "f64_erf_inv_giles".to_string(),
            "f64_sin" | "f64_cos" | "f64_tan" | "f64_atan2" => function.to_string(),
            f => {
                defines.push("F32X".to_string());
                f.replace("f64_", "f32x_")
            }
        };
        defines.push(format!("F64_MATH_OP={op}"));
        defines.push(format!("F64_MATH_FN={f32_function}"));
        if name == "exp" {
            // f32 results through exp32.glsl's fast path first (`exp_fast_path`).
            let mut fast = defines.clone();
            fast.push("EXP32".to_string());
            v.push(("f32_math_exp_fast".to_string(), src, fast));
        }
        v.push((format!("f32_math_{name}"), src, defines));
    }
    for (name, define) in COMPLEX_MATH {
        let defines = ["CT_F64", "COMPLEX_MATH", define]
            .map(String::from)
            .to_vec();
        v.push((
            format!("complex_math_{name}"),
            "complex/complex.comp",
            defines,
        ));
    }
    v
}

/// The test-only kernels: every `*.comp` of `test_dir`, no defines.
pub fn test_variants(test_dir: &std::path::Path) -> Vec<Variant> {
    let mut names: Vec<String> = std::fs::read_dir(test_dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".comp"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|file| {
            let name = file.trim_end_matches(".comp").to_string();
            let src: &'static str = Box::leak(file.into_boxed_str());
            (name, src, Vec::new())
        })
        .collect()
}
