//! Sizes past the limits that kernels and bindings must not trip on: more elements than
//! one grid row of groups covers (65535 x 256), and a tensor larger than lavapipe's
//! 128 MiB maxStorageBufferRange (kernels reach memory through device addresses).

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{engine, DType};

#[test]
fn add_beyond_one_grid_row() {
    // 2^24 + 5 elements: 65,537 groups of 256, so the grid needs a second row (y = 1).
    let n = (1 << 24) + 5;
    assert!(n > 65_535 * 256);
    let a: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| ((i * 7) % 13) as f32).collect();
    let c = binary(
        BinaryOp::Add,
        &upload(&[n], DType::F32, &a),
        &upload(&[n], DType::F32, &b),
        &[n],
        DType::F32,
    )
    .unwrap();
    let got: Vec<f32> = download(&c);
    assert_eq!(got.len(), n);
    for i in 0..n {
        assert_eq!(got[i], a[i] + b[i], "element {i}");
    }
}

#[test]
fn tensor_larger_than_the_storage_buffer_range() {
    // 40M f32 = 160 MB per tensor.
    let n = 40_000_000usize;
    let info = engine().unwrap().info();
    if (n * 4) as u64 <= info.max_storage_buffer_range as u64 {
        // GPUs allow ranges of 4 GiB or more; this limit is lavapipe's (128 MiB).
        eprintln!(
            "skipped: 160 MB is within this device's maxStorageBufferRange ({})",
            info.max_storage_buffer_range
        );
        return;
    }
    let a: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let ta = upload(&[n], DType::F32, &a);
    let ones = upload(&[1], DType::F32, &[1.0f32]);
    let c = binary(BinaryOp::Add, &ta, &ones, &[n], DType::F32).unwrap();
    let got: Vec<f32> = download(&c);
    assert_eq!(got.len(), n);
    // Every element, and spot checks of the far end with their indices.
    for i in (0..n).step_by(9973).chain(n - 100..n) {
        assert_eq!(got[i], (i % 17) as f32 + 1.0, "element {i}");
    }
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, &x)| x == (i % 17) as f32 + 1.0));
    // Sum: exact in f64; in f32 within the rounding of a few tree levels above 2^24.
    let want: u64 = (0..n as u64).map(|i| i % 17 + 1).sum();
    let s: Vec<f64> = download(&reduce(ReduceOp::Sum, &c, None, false, DType::F64).unwrap());
    assert_eq!(s, vec![want as f64]);
    let s: Vec<f32> = download(&reduce(ReduceOp::Sum, &c, None, false, DType::F32).unwrap());
    assert!(
        (s[0] as f64 - want as f64).abs() <= 1e-6 * want as f64,
        "f32 sum {} vs {want}",
        s[0]
    );
    // Max over the whole tensor, and a row view across the 128 MiB boundary.
    let m: Vec<f32> = download(&reduce(ReduceOp::Max, &c, None, false, DType::F32).unwrap());
    assert_eq!(m, vec![17.0]);
    let rows = c.reshape(&[4, n / 4]).unwrap();
    let s: Vec<f64> =
        download(&reduce(ReduceOp::Sum, &rows, Some(&[1]), false, DType::F64).unwrap());
    for (r, &v) in s.iter().enumerate() {
        let want: u64 = ((r * n / 4) as u64..((r + 1) * n / 4) as u64)
            .map(|i| i % 17 + 1)
            .sum();
        assert_eq!(v, want as f64, "row {r}");
    }
}
