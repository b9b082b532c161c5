//! `NX_VULKAN_EXACT_TILES=0`: the register-blocked f32 kernel without the exact-tile proof
//! (sgemm.comp's other module, which devices without f64, or that keep f32 subnormals,
//! always use). Elsewhere lavapipe runs the exact-tile module, so this file is where CI
//! checks the other one: partial tiles, batches and a split K.
//!
//! A file of its own: the setting is read once per process, before the first product.

mod common;

use common::matmul::{check_matmul_f32, row0_of_products};
use common::*;

#[test]
fn register_blocked_f32_without_the_exact_tile_proof() {
    std::env::set_var("NX_VULKAN_EXACT_TILES", "0");
    let mut rng = Rng::new(57);
    check_matmul_f32([1, 300, 260, 516], (1.0, 1.0), &mut rng);
    check_matmul_f32([3, 129, 36, 132], (1.0, 1.0), &mut rng);
    check_matmul_f32([1, 128, 16_392, 128], (1.0, 1.0), &mut rng);
    // No tile is recomputed: the f32 fmas' 1, where an exact tile gives 1 + 2^-23.
    assert!(row0_of_products(2f32.powi(-100)).iter().all(|&x| x == 1.0));
}
