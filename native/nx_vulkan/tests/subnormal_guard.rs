//! The exact tiles of the register-blocked f32 kernel (sgemm.comp, built with
//! `EXACT_VIA_F64` for devices with f64 that do not promise to keep f32 subnormals:
//! NVIDIA's and lavapipe). A tile whose loaded values cannot prove its f32 sums free of
//! subnormals is recomputed in f64 from the operands' bits. On the H200 the subnormal
//! products gave zeros before (raw `nvidia-h200-2026-12-01z`, guard off). On lavapipe,
//! which keeps subnormals anyway, `unproven_tiles_are_rounded_once` shows the exact path
//! runs: only it rounds a sum once.

mod common;

use common::matmul::{batched_matmul_f32, check_matmul_f32, matmul_by_ones, row0_of_products};
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

/// Each tile's proof uses its own row block of A, column block of B and batch: two
/// batches of 256x64 by 64x256, one tiny value in batch 1's second row block of A and one
/// in batch 0's second column block of B. Row 0 of every row block holds 1, 2^-24, 2^-24
/// (times ones): the f32 path rounds its sum to 1, the exact path gives 1 + 2^-23. Only
/// the tiles that see a tiny value lack the proof.
#[test]
fn each_tile_is_proven_from_its_own_blocks() {
    let (batch, m, k, n) = (2, 256, 64, 256);
    let mut a = vec![0f32; batch * m * k];
    for bt in 0..batch {
        for rb in 0..2 {
            let row = (bt * m + rb * 128) * k;
            a[row] = 1.0;
            a[row + 1] = 2f32.powi(-24);
            a[row + 2] = 2f32.powi(-24);
        }
    }
    a[(m + 128 + 7) * k + 9] = 2f32.powi(-100);
    let mut b = vec![1f32; batch * k * n];
    b[10 * n + 130] = 2f32.powi(-100);
    let c: Vec<f32> = download(&batched_matmul_f32(&a, &b, [batch, m, k, n]));
    let exact = 1.0 + 2f32.powi(-23);
    for bt in 0..batch {
        for rb in 0..2 {
            for col in 0..n {
                let unproven = (bt == 1 && rb == 1) || (bt == 0 && col >= 128);
                let got = c[(bt * m + rb * 128) * n + col];
                let want = if unproven { exact } else { 1.0 };
                assert_eq!(got, want, "batch {bt}, row block {rb}, column {col}");
            }
        }
    }
}
