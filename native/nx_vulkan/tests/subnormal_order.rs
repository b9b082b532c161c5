//! f32 subnormals ordered as themselves by every comparing kernel: max/min reductions,
//! argmax/argmin, sort/argsort, window max/min and window_scatter. NVIDIA's f32 compares
//! flush subnormal operands to zero, so on the H200 these kernels picked arbitrary
//! elements among subnormals until they compared through the bits (`T_LESS` in
//! shaders/common/types.glsl). Devices that keep subnormals (lavapipe) pass either way.

mod common;

use common::*;
use nx_vulkan::ops::reduce::{argreduce, reduce, ReduceOp};
use nx_vulkan::ops::sort::{argsort, sort};
use nx_vulkan::ops::window::{window_reduce, window_scatter, WindowSpec};
use nx_vulkan::DType;

/// Distinct subnormals of both signs (and the least normal), in no order.
fn values() -> Vec<f32> {
    [
        3e-40f32,
        -1e-40,
        7e-41,
        2e-40,
        -3e-40,
        1e-45,
        -2e-45,
        1.1754944e-38,
        5e-39,
        -6e-39,
    ]
    .to_vec()
}

fn max_of(v: &[f32]) -> f32 {
    v.iter().copied().fold(f32::NEG_INFINITY, f32::max)
}

fn min_of(v: &[f32]) -> f32 {
    v.iter().copied().fold(f32::INFINITY, f32::min)
}

fn position(v: &[f32], x: f32) -> usize {
    v.iter().position(|&y| y.to_bits() == x.to_bits()).unwrap()
}

#[test]
fn max_and_min_reductions() {
    let v = values();
    let t = upload(&[2, 5], DType::F32, &v);
    for (op, pick) in [
        (ReduceOp::Max, max_of as fn(&[f32]) -> f32),
        (ReduceOp::Min, min_of),
    ] {
        let rows: Vec<f32> = download(&reduce(op, &t, Some(&[1]), false, DType::F32).unwrap());
        let want: Vec<f32> = v.chunks(5).map(pick).collect();
        assert_eq!(bits(&rows), bits(&want), "{op:?} over rows");
        let all: Vec<f32> = download(&reduce(op, &t, None, false, DType::F32).unwrap());
        assert_eq!(all[0].to_bits(), pick(&v).to_bits(), "{op:?} over all");
    }
}

#[test]
fn argmax_and_argmin() {
    let v = values();
    let t = upload(&[2, 5], DType::F32, &v);
    for (is_min, pick) in [(false, max_of as fn(&[f32]) -> f32), (true, min_of)] {
        let got: Vec<i32> =
            download(&argreduce(&t, Some(1), false, is_min, false, DType::S32).unwrap());
        let want: Vec<i32> = v.chunks(5).map(|r| position(r, pick(r)) as i32).collect();
        assert_eq!(got, want, "is_min {is_min}");
    }
}

#[test]
fn sort_and_argsort() {
    let v = values();
    let t = upload(&[v.len()], DType::F32, &v);
    for desc in [false, true] {
        let mut want = v.clone();
        want.sort_by(|a, b| if desc { b.total_cmp(a) } else { a.total_cmp(b) });
        let got: Vec<f32> = download(&sort(&t, 0, desc).unwrap());
        assert_eq!(bits(&got), bits(&want), "desc {desc}");
        let idx: Vec<i32> = download(&argsort(&t, 0, desc, DType::S32).unwrap());
        let want_idx: Vec<i32> = want.iter().map(|&x| position(&v, x) as i32).collect();
        assert_eq!(idx, want_idx, "argsort desc {desc}");
    }
}

#[test]
fn window_max_min_and_scatter() {
    let v = values();
    let n = v.len();
    let t = upload(&[n], DType::F32, &v);
    let spec = WindowSpec {
        dims: vec![3],
        strides: vec![1],
        padding: vec![(0, 0)],
        dilations: vec![1],
    };
    for (op, pick) in [
        (ReduceOp::Max, max_of as fn(&[f32]) -> f32),
        (ReduceOp::Min, min_of),
    ] {
        let got: Vec<f32> = download(&window_reduce(op, &t, &spec, DType::F32).unwrap());
        let want: Vec<f32> = v.windows(3).map(pick).collect();
        assert_eq!(bits(&got), bits(&want), "window {op:?}");
    }
    // Windows of 2 at stride 2: each source value lands on its window's extreme.
    let source = upload(
        &[n / 2],
        DType::F32,
        &(1..=n / 2).map(|i| i as f32).collect::<Vec<_>>(),
    );
    let init = upload(&[], DType::F32, &[0f32]);
    for (is_min, pick) in [(false, max_of as fn(&[f32]) -> f32), (true, min_of)] {
        let got: Vec<f32> = download(
            &window_scatter(
                is_min,
                &t,
                &source,
                &init,
                &[2],
                &[2],
                &[(0, 0)],
                DType::F32,
            )
            .unwrap(),
        );
        let mut want = vec![0f32; n];
        for (w, pair) in v.chunks(2).enumerate() {
            want[2 * w + position(pair, pick(pair))] = (w + 1) as f32;
        }
        assert_eq!(got, want, "window_scatter is_min {is_min}");
    }
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits()).collect()
}
