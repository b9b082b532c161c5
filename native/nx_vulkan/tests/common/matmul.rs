//! Batched f32 matrix products through `dot` against a plain-loop f64 reference (shared by
//! the dot, sgemm and subnormal tests, which differ in which kernel module runs them).

use super::{download, upload, Rng};
use nx_vulkan::ops::dot::dot;
use nx_vulkan::DType;

/// `batch` products of an m x k operand scaled by `scale.0` and a k x n one scaled by
/// `scale.1` (uniform values in (-1, 1) before scaling), against f64 sums, within
/// K * 2^-23 * sum |a_k * b_k| (the classic bound for K-term dot products in f32, whatever
/// the summation order) plus one rounding of the result.
pub fn check_matmul_f32([batch, m, k, n]: [usize; 4], scale: (f32, f32), rng: &mut Rng) {
    let mut scaled = |len: usize, s: f32| -> Vec<f32> {
        rng.f32s(len, -1.0, 1.0).iter().map(|x| x * s).collect()
    };
    let a = scaled(batch * m * k, scale.0);
    let b = scaled(batch * k * n, scale.1);
    let t = batched_matmul_f32(&a, &b, [batch, m, k, n]);
    assert_eq!(t.shape, vec![batch, m, n]);
    let got: Vec<f32> = download(&t);
    let mut want = vec![(0f64, 0f64); batch * m * n];
    for (z, out) in want.chunks_mut(m * n).enumerate() {
        let (a, b) = (&a[z * m * k..], &b[z * k * n..]);
        for (i, row) in out.chunks_mut(n).enumerate() {
            for p in 0..k {
                let x = a[i * k + p] as f64;
                for (w, &y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    let xy = x * y as f64;
                    *w = (w.0 + xy, w.1 + xy.abs());
                }
            }
        }
    }
    for (i, (&g, &(s, mag))) in got.iter().zip(&want).enumerate() {
        let bound = k as f64 * 2f64.powi(-23) * mag + 2f64.powi(-24) * s.abs();
        assert!(
            (g as f64 - s).abs() <= bound,
            "{batch} x {m}x{k}x{n}: element {i} got {g:e} want {s:e} (bound {bound:e})"
        );
    }
}

/// Row 0 of A is [1, 2^-24, 2^-24, 0, ...] and B is all ones, so each C[0][j] is exactly
/// 1 + 2^-23, an f32. sgemm's f32 fmas, in order, round 1 + 2^-24 to 1 twice and give 1;
/// an exact tile rounds the sum once. `tiny` in A's row 5 decides which tile it is (with
/// the exact-tile module): 2^-100 times B's ones can sum below 2^-126, so that tile has no
/// proof and is exact; 2^-20 leaves the proof standing, and the f32 result is 1.
pub fn row0_of_products(tiny: f32) -> Vec<f32> {
    let (m, k, n) = (128, 64, 128);
    let mut a = vec![0f32; m * k];
    a[0] = 1.0;
    a[1] = 2f32.powi(-24);
    a[2] = 2f32.powi(-24);
    a[5 * k + 10] = tiny;
    matmul_by_ones(&a, [m, k, n])[..n].to_vec()
}

/// The f32 product of `a` (m x k) and a k x n matrix of ones: each row's sums.
pub fn matmul_by_ones(a: &[f32], [m, k, n]: [usize; 3]) -> Vec<f32> {
    let b = vec![1f32; k * n];
    download(
        &dot(
            &upload(&[m, k], DType::F32, a),
            &[1],
            &[],
            &upload(&[k, n], DType::F32, &b),
            &[0],
            &[],
            DType::F32,
        )
        .unwrap(),
    )
}

/// The f32 product of `a` (batch x m x k) and `b` (batch x k x n) through `dot`, with
/// the first axis as the batch.
pub fn batched_matmul_f32(a: &[f32], b: &[f32], [batch, m, k, n]: [usize; 4]) -> nx_vulkan::Tensor {
    dot(
        &upload(&[batch, m, k], DType::F32, a),
        &[2],
        &[0],
        &upload(&[batch, k, n], DType::F32, b),
        &[1],
        &[0],
        DType::F32,
    )
    .unwrap()
}
