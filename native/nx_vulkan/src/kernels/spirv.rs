//! The GLSL kernels of `shaders/`, compiled to SPIR-V at build time by vulkano-shaders.
//! One module per (kernel, compute class or element width); each exposes `load(device)`.

macro_rules! kernel {
    ($name:ident, $path:literal, $define:literal, $define2:literal) => {
        pub mod $name {
            vulkano_shaders::shader! {
                ty: "compute",
                path: $path,
                define: [($define, "1"), ($define2, "1")],
                vulkan_version: "1.2",
                spirv_version: "1.5",
                generate_structs: false,
            }
        }
    };
    ($name:ident, $path:literal, $define:literal) => {
        pub mod $name {
            vulkano_shaders::shader! {
                ty: "compute",
                path: $path,
                define: [($define, "1")],
                vulkan_version: "1.2",
                spirv_version: "1.5",
                generate_structs: false,
            }
        }
    };
}

kernel!(unary_f32, "../../shaders/elementwise/unary.comp", "CT_F32");
kernel!(unary_f64, "../../shaders/elementwise/unary.comp", "CT_F64");
kernel!(unary_i32, "../../shaders/elementwise/unary.comp", "CT_I32");
kernel!(unary_u32, "../../shaders/elementwise/unary.comp", "CT_U32");
kernel!(unary_i64, "../../shaders/elementwise/unary.comp", "CT_I64");
kernel!(unary_u64, "../../shaders/elementwise/unary.comp", "CT_U64");
kernel!(
    binary_f32,
    "../../shaders/elementwise/binary.comp",
    "CT_F32"
);
kernel!(
    binary_f64,
    "../../shaders/elementwise/binary.comp",
    "CT_F64"
);
kernel!(
    binary_i32,
    "../../shaders/elementwise/binary.comp",
    "CT_I32"
);
kernel!(
    binary_u32,
    "../../shaders/elementwise/binary.comp",
    "CT_U32"
);
kernel!(
    binary_i64,
    "../../shaders/elementwise/binary.comp",
    "CT_I64"
);
kernel!(
    binary_u64,
    "../../shaders/elementwise/binary.comp",
    "CT_U64"
);
kernel!(reduce_f32, "../../shaders/reduce/reduce.comp", "CT_F32");
kernel!(reduce_f64, "../../shaders/reduce/reduce.comp", "CT_F64");
kernel!(reduce_i32, "../../shaders/reduce/reduce.comp", "CT_I32");
kernel!(reduce_u32, "../../shaders/reduce/reduce.comp", "CT_U32");
kernel!(reduce_i64, "../../shaders/reduce/reduce.comp", "CT_I64");
kernel!(reduce_u64, "../../shaders/reduce/reduce.comp", "CT_U64");
kernel!(
    argreduce_f32,
    "../../shaders/reduce/argreduce.comp",
    "CT_F32"
);
kernel!(
    argreduce_f64,
    "../../shaders/reduce/argreduce.comp",
    "CT_F64"
);
kernel!(
    argreduce_i32,
    "../../shaders/reduce/argreduce.comp",
    "CT_I32"
);
kernel!(
    argreduce_u32,
    "../../shaders/reduce/argreduce.comp",
    "CT_U32"
);
kernel!(
    argreduce_i64,
    "../../shaders/reduce/argreduce.comp",
    "CT_I64"
);
kernel!(
    argreduce_u64,
    "../../shaders/reduce/argreduce.comp",
    "CT_U64"
);
kernel!(matmul_f32, "../../shaders/linalg/matmul.comp", "CT_F32");
kernel!(matmul_f64, "../../shaders/linalg/matmul.comp", "CT_F64");
kernel!(matmul_i32, "../../shaders/linalg/matmul.comp", "CT_I32");
kernel!(matmul_u32, "../../shaders/linalg/matmul.comp", "CT_U32");
kernel!(matmul_i64, "../../shaders/linalg/matmul.comp", "CT_I64");
kernel!(matmul_u64, "../../shaders/linalg/matmul.comp", "CT_U64");
kernel!(index_f32, "../../shaders/creation/index.comp", "CT_F32");
kernel!(index_f64, "../../shaders/creation/index.comp", "CT_F64");
kernel!(index_i32, "../../shaders/creation/index.comp", "CT_I32");
kernel!(index_u32, "../../shaders/creation/index.comp", "CT_U32");
kernel!(index_i64, "../../shaders/creation/index.comp", "CT_I64");
kernel!(index_u64, "../../shaders/creation/index.comp", "CT_U64");
// f32 element-wise kernels whose division and sqrt go through f64 (correctly rounded
// where drivers' f32 ones are not); used on devices with shaderFloat64.
kernel!(
    unary_f32x,
    "../../shaders/elementwise/unary.comp",
    "CT_F32",
    "EXACT_VIA_F64"
);
kernel!(
    binary_f32x,
    "../../shaders/elementwise/binary.comp",
    "CT_F32",
    "EXACT_VIA_F64"
);
kernel!(copy_w8, "../../shaders/movement/copy.comp", "W8");
kernel!(copy_w16, "../../shaders/movement/copy.comp", "W16");
kernel!(copy_w32, "../../shaders/movement/copy.comp", "W32");
kernel!(copy_w64, "../../shaders/movement/copy.comp", "W64");
