//! `NX_VULKAN_SUBNORMAL_GUARD=1`: f32 products of the register-blocked kernel
//! (sgemm.comp) whose operands hold subnormals. Drivers that flush f32 subnormals
//! (NVIDIA's) gave zeros for them; with the guard a scan finds them and an exact launch in
//! f64 recomputes the product. On the H200 this test fails with the guard off and passes
//! with it on (raw `nvidia-h200-2026-12-01z`). On lavapipe, which keeps subnormals, it
//! passes either way, and the guard's exact launch runs all the same.
//!
//! A file of its own: the guard is read once per process, before the first product.

mod common;

use common::*;
use nx_vulkan::ops::dot::dot;
use nx_vulkan::DType;

/// `batch` products of an m x k operand scaled by `scale.0` and a k x n one scaled by
/// `scale.1` (uniform values in (-1, 1) before scaling), against f64 sums on the host.
fn check(batch: usize, m: usize, k: usize, n: usize, scale: (f32, f32), rng: &mut Rng) {
    let mut scaled = |len: usize, s: f32| -> Vec<f32> {
        rng.f32s(len, -1.0, 1.0).iter().map(|x| x * s).collect()
    };
    let a = scaled(batch * m * k, scale.0);
    let b = scaled(batch * k * n, scale.1);
    let got: Vec<f32> = download(
        &dot(
            &upload(&[batch, m, k], DType::F32, &a),
            &[2],
            &[0],
            &upload(&[batch, k, n], DType::F32, &b),
            &[1],
            &[0],
            DType::F32,
        )
        .unwrap(),
    );
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut mag) = (0f64, 0f64);
                for p in 0..k {
                    let xy = a[(z * m + i) * k + p] as f64 * b[(z * k + p) * n + j] as f64;
                    s += xy;
                    mag += xy.abs();
                }
                let g = got[(z * m + i) * n + j] as f64;
                let bound = k as f64 * 2f64.powi(-23) * mag + 2f64.powi(-24) * s.abs();
                assert!(
                    (g - s).abs() <= bound,
                    "[{z}, {i}, {j}]: got {g:e} want {s:e} (bound {bound:e})"
                );
            }
        }
    }
}

#[test]
fn register_blocked_products_of_subnormal_operands() {
    std::env::set_var("NX_VULKAN_SUBNORMAL_GUARD", "1");
    let mut rng = Rng::new(56);
    // Products of about 1e-9 from subnormal A (|x| < 1e-39) or subnormal B.
    check(2, 130, 132, 136, (1e-39, 1e30), &mut rng);
    check(1, 128, 64, 128, (1e30, 1e-39), &mut rng);
    // No subnormals: the guarded launch does nothing and sgemm's result stands.
    check(1, 128, 64, 128, (1.0, 1.0), &mut rng);
}
