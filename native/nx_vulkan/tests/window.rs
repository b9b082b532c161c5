//! Window reductions against a host reference that pads with the op's identity and folds
//! each window in row-major order, as Nx.BinaryBackend does.

mod common;

use common::*;
use nx_vulkan::ops::reduce::ReduceOp;
use nx_vulkan::ops::window::{window_reduce, WindowSpec};
use nx_vulkan::{DType, Error};

fn spec(
    dims: &[usize],
    strides: &[usize],
    padding: &[(isize, isize)],
    dil: &[usize],
) -> WindowSpec {
    WindowSpec {
        dims: dims.to_vec(),
        strides: strides.to_vec(),
        padding: padding.to_vec(),
        dilations: dil.to_vec(),
    }
}

/// Folds every window of `x` (shape `shape`) with `f`, from `init`; positions outside the
/// input (padding) are skipped, which is what folding the identity would do.
fn reference<T: Copy>(
    x: &[T],
    shape: &[usize],
    s: &WindowSpec,
    init: T,
    f: impl Fn(T, T) -> T,
) -> (Vec<usize>, Vec<T>) {
    let out_shape = s.output_shape(shape, "reference").unwrap();
    let n: usize = out_shape.iter().product();
    let w: usize = s.dims.iter().product();
    let out = (0..n)
        .map(|i| {
            let o = unravel(i, &out_shape);
            let mut acc = init;
            for k in 0..w {
                let kk = unravel(k, &s.dims);
                let mut idx = Vec::new();
                for d in 0..shape.len() {
                    let c = (o[d] * s.strides[d]) as isize - s.padding[d].0
                        + (kk[d] * s.dilations[d]) as isize;
                    if c < 0 || c >= shape[d] as isize {
                        break;
                    }
                    idx.push(c as usize);
                }
                if idx.len() == shape.len() {
                    acc = f(acc, x[ravel(&idx, shape)]);
                }
            }
            acc
        })
        .collect();
    (out_shape, out)
}

fn cases() -> Vec<(Vec<usize>, WindowSpec)> {
    vec![
        (
            vec![2, 2, 3],
            spec(&[1, 2, 1], &[1, 1, 1], &[(0, 0); 3], &[1, 1, 1]),
        ),
        (
            vec![2, 2, 3],
            spec(
                &[2, 2, 1],
                &[1, 2, 3],
                &[(0, 1), (2, 0), (1, 1)],
                &[1, 1, 1],
            ),
        ),
        (
            vec![2, 2, 4],
            spec(
                &[2, 1, 2],
                &[2, 1, 1],
                &[(2, 1), (3, 1), (1, 0)],
                &[1, 2, 2],
            ),
        ),
        // Negative padding crops; a window can lie wholly in the padding.
        (
            vec![5, 7],
            spec(&[2, 3], &[2, 1], &[(-1, 3), (4, -2)], &[1, 2]),
        ),
        (
            vec![3, 1, 4, 5],
            spec(&[1, 1, 2, 2], &[1, 1, 1, 2], &[(0, 0); 4], &[1, 1, 1, 2]),
        ),
        (
            vec![37, 41],
            spec(&[3, 3], &[1, 1], &[(1, 1), (1, 1)], &[1, 1]),
        ), // 3x3 same-size
        (vec![6], spec(&[6], &[1], &[(0, 0)], &[1])),
    ]
}

#[test]
fn s32_windows_are_exact_for_every_op() {
    let mut rng = Rng::new(90);
    for (shape, s) in cases() {
        let x: Vec<i32> = (0..shape.iter().product())
            .map(|_| rng.int(-9, 9) as i32)
            .collect();
        let t = upload(&shape, DType::S32, &x);
        for (op, init, f) in [
            (
                ReduceOp::Sum,
                0i32,
                (|a: i32, b: i32| a.wrapping_add(b)) as fn(i32, i32) -> i32,
            ),
            (ReduceOp::Product, 1, |a, b| a.wrapping_mul(b)),
            (ReduceOp::Max, i32::MIN, |a, b| a.max(b)),
            (ReduceOp::Min, i32::MAX, |a, b| a.min(b)),
        ] {
            let (want_shape, want) = reference(&x, &shape, &s, init, f);
            let got = window_reduce(op, &t, &s, DType::S32).unwrap();
            assert_eq!(got.shape, want_shape, "{op:?} {shape:?} {s:?}");
            assert_eq!(download::<i32>(&got), want, "{op:?} {shape:?} {s:?}");
        }
    }
}

#[test]
fn narrow_integers_pad_with_their_own_range() {
    // A window wholly in the padding gives the identity of the output type: -128 for s8 max.
    let s = spec(&[2], &[1], &[(3, 0)], &[1]);
    let t = upload(&[2], DType::S8, &[5i8, -7]);
    let got = window_reduce(ReduceOp::Max, &t, &s, DType::S8).unwrap();
    assert_eq!(download::<i8>(&got), vec![-128, -128, 5, 5]);
    let t = upload(&[2], DType::U8, &[200u8, 3]);
    let got = window_reduce(ReduceOp::Min, &t, &s, DType::U8).unwrap();
    assert_eq!(download::<u8>(&got), vec![255, 255, 200, 3]);
    let got = window_reduce(ReduceOp::Sum, &t, &s, DType::U8).unwrap();
    assert_eq!(download::<u8>(&got), vec![0, 0, 200, 203]);
}

#[test]
fn float_windows_match_with_nan_and_infinities() {
    let mut rng = Rng::new(91);
    for (shape, s) in cases() {
        let n: usize = shape.iter().product();
        let mut x: Vec<f64> = (0..n).map(|_| rng.uniform(-2.0, 2.0)).collect();
        if n > 7 {
            x[3] = f64::NAN;
            x[n - 2] = f64::INFINITY;
        }
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let nan_max = |a: f64, b: f64| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.max(b)
            }
        };
        let nan_min = |a: f64, b: f64| {
            if a.is_nan() || b.is_nan() {
                f64::NAN
            } else {
                a.min(b)
            }
        };
        for (op, init, f) in [
            (
                ReduceOp::Sum,
                0.0,
                (|a: f64, b: f64| a + b) as fn(f64, f64) -> f64,
            ),
            (ReduceOp::Product, 1.0, |a, b| a * b),
            (ReduceOp::Max, f64::NEG_INFINITY, nan_max),
            (ReduceOp::Min, f64::INFINITY, nan_min),
        ] {
            let x32d: Vec<f64> = x32.iter().map(|&v| v as f64).collect();
            let (_, want32) = reference(&x32d, &shape, &s, init, f);
            let got = download::<f32>(
                &window_reduce(op, &upload(&shape, DType::F32, &x32), &s, DType::F32).unwrap(),
            );
            for (i, (&g, &w)) in got.iter().zip(&want32).enumerate() {
                let ok = (g.is_nan() && w.is_nan())
                    || g as f64 == w
                    || ((g as f64 - w).abs() <= 1e-5 * w.abs().max(1.0));
                assert!(
                    ok,
                    "f32 {op:?} {shape:?} {s:?} element {i}: got {g} want {w}"
                );
            }
            let (_, want) = reference(&x, &shape, &s, init, f);
            let got = download::<f64>(
                &window_reduce(op, &upload(&shape, DType::F64, &x), &s, DType::F64).unwrap(),
            );
            for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
                let ok = (g.is_nan() && w.is_nan())
                    || g == w
                    || (g - w).abs() <= 1e-12 * w.abs().max(1.0);
                assert!(
                    ok,
                    "f64 {op:?} {shape:?} {s:?} element {i}: got {g} want {w}"
                );
            }
        }
    }
}

#[test]
fn bad_windows_are_errors() {
    let t = upload(&[2, 3], DType::F32, &[0f32; 6]);
    for s in [
        spec(&[1], &[1], &[(0, 0)], &[1]),
        spec(&[1, 0], &[1, 1], &[(0, 0); 2], &[1, 1]),
        spec(&[1, 1], &[0, 1], &[(0, 0); 2], &[1, 1]),
    ] {
        assert!(
            matches!(
                window_reduce(ReduceOp::Sum, &t, &s, DType::F32),
                Err(Error::InvalidArgument(_))
            ),
            "{s:?}"
        );
    }
    // A window larger than the padded input gives an empty result.
    let got = window_reduce(
        ReduceOp::Max,
        &t,
        &spec(&[3, 1], &[1, 1], &[(0, 0); 2], &[1, 1]),
        DType::F32,
    )
    .unwrap();
    assert_eq!(got.shape, vec![0, 3]);
}
