//! The exact tiles of the register-blocked f32 kernel (sgemm.comp, built with
//! `EXACT_VIA_F64` for devices with f64 that do not promise to keep f32 subnormals:
//! NVIDIA's and lavapipe). A tile whose loaded values cannot prove its f32 sums free of
//! subnormals is recomputed in f64 from the operands' bits. On the H200 the subnormal
//! products gave zeros before (raw `nvidia-h200-2026-12-01z`, guard off). On lavapipe,
//! which keeps subnormals anyway, `unproven_tiles_are_rounded_once` shows the exact path
//! runs: only it rounds a sum once.

mod common;

use common::matmul::{check_matmul_f32, matmul_by_ones, row0_of_products};
use common::*;

#[test]
fn register_blocked_products_of_subnormal_operands() {
    let mut rng = Rng::new(56);
    // Products of about 1e-9 from subnormal A (|x| < 1e-39) or subnormal B.
    check_matmul_f32([2, 130, 132, 136], (1e-39, 1e30), &mut rng);
    check_matmul_f32([1, 128, 64, 128], (1e30, 1e-39), &mut rng);
    // No subnormals: sgemm's f32 result stands.
    check_matmul_f32([1, 128, 64, 128], (1.0, 1.0), &mut rng);
    // Normal operands whose products (about 1e-30 * 1e-10) may sum below 2^-126: no
    // proof, so recomputed exactly.
    check_matmul_f32([1, 128, 64, 128], (1e-30, 1e-10), &mut rng);
}

#[test]
fn unproven_tiles_are_rounded_once() {
    let exact = 1.0 + 2f32.powi(-23);
    assert!(row0_of_products(2f32.powi(-100))
        .iter()
        .all(|&x| x == exact));
    assert!(row0_of_products(2f32.powi(-20)).iter().all(|&x| x == 1.0));
}

/// A contraction longer than one launch (K ranges of 16,384, each later one adding to C):
/// the first range's tile holds a subnormal operand, so it is exact and leaves C[0][j] =
/// 2^-140, a subnormal; the second range's tile is proven (its only nonzero is a 1 in row
/// 1) and must add that subnormal without flushing it.
#[test]
fn split_contractions_keep_an_earlier_ranges_subnormal_sums() {
    let (m, k, n) = (128, 16_384 + 4, 128);
    let mut a = vec![0f32; m * k];
    a[0] = 2f32.powi(-140);
    a[k + 16_384] = 1.0;
    let c = matmul_by_ones(&a, [m, k, n]);
    assert!(c[..n].iter().all(|&x| x == 2f32.powi(-140)), "{:e}", c[0]);
    assert!(c[n..2 * n].iter().all(|&x| x == 1.0));
}
