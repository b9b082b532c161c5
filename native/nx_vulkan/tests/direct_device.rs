//! `NX_VULKAN_DIRECT_DEVICE=1`: the device created with Vulkan's own call
//! (`device_create.rs`), the path devices with bf16 cooperative matrices take, run here on
//! whatever device the tests have (lavapipe in CI, which offers no bf16).
//!
//! A file of its own: the setting is read once per process, when the device is opened.

mod common;

use common::matmul::check_matmul_f32;
use common::*;
use nx_vulkan::dtype::DType;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};

#[test]
fn a_device_created_directly_runs_the_kernels() {
    std::env::set_var("NX_VULKAN_DIRECT_DEVICE", "1");
    let engine = nx_vulkan::engine().unwrap();
    // The direct path builds Vulkan 1.3's feature structures; older devices keep vulkano's.
    let version: Vec<u32> = engine
        .info()
        .api_version
        .split('.')
        .map(|p| p.parse().unwrap())
        .collect();
    let vulkan_1_3 = (version[0], version[1]) >= (1, 3);
    assert_eq!(nx_vulkan::device_create::created_here(), vulkan_1_3);
    assert_eq!(
        nx_vulkan::device_create::created_with_bf16(),
        engine.info().cooperative_matrix_bf16
    );
    // Buffer device addresses (every kernel), 64-bit and 16-bit types.
    let mut rng = Rng::new(91);
    check_matmul_f32([1, 130, 64, 132], (1.0, 1.0), &mut rng);
    let x = upload(&[3], DType::F64, &[1.5f64, -2.0, 1e300]);
    let y = binary(BinaryOp::Add, &x, &x, &[3], DType::F64).unwrap();
    assert_eq!(download::<f64>(&y), vec![3.0, -4.0, 2e300]);
    let x = upload(&[2], DType::S64, &[1i64 << 40, -7]);
    let y = binary(BinaryOp::Multiply, &x, &x, &[2], DType::S64).unwrap();
    assert_eq!(download::<i64>(&y), vec![0, 49]);
    let halves: Vec<u16> = [0.5f64, 3.0]
        .iter()
        .map(|&v| f16_bits_from_f64(v))
        .collect();
    let x = upload(&[2], DType::F16, &halves);
    let y = binary(BinaryOp::Add, &x, &x, &[2], DType::F16).unwrap();
    let got: Vec<f64> = download::<u16>(&y).into_iter().map(f16_to_f64).collect();
    assert_eq!(got, vec![1.0, 6.0]);
}
