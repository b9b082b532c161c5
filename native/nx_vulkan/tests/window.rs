//! Window reductions against a host reference that pads with the op's identity and folds
//! each window in row-major order, as Nx.BinaryBackend does.

mod common;

use common::*;
use nx_vulkan::ops::reduce::ReduceOp;
use nx_vulkan::ops::window::{window_reduce, window_scatter, WindowSpec};
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

/// window_scatter as Nx.BinaryBackend defines it: pad with `init`, pick each window's last
/// maximum (`x >= best`, first element chosen even when NaN), add its source value there
/// unless it is padding; `init` everywhere else.
fn scatter_reference(
    is_min: bool,
    x: &[f64],
    shape: &[usize],
    s: &WindowSpec,
    src: &[f64],
    init: f64,
) -> Vec<f64> {
    let wshape = s.output_shape(shape, "reference").unwrap();
    let mut out = vec![init; x.len()];
    let w: usize = s.dims.iter().product();
    for (i, &v) in src.iter().enumerate() {
        let o = unravel(i, &wshape);
        let (mut best, mut chosen) = (0.0, None);
        for k in 0..w {
            let kk = unravel(k, &s.dims);
            let c: Vec<isize> = (0..shape.len())
                .map(|d| (o[d] * s.strides[d]) as isize - s.padding[d].0 + kk[d] as isize)
                .collect();
            let inside = c.iter().zip(shape).all(|(&c, &n)| c >= 0 && c < n as isize);
            let pos =
                inside.then(|| ravel(&c.iter().map(|&c| c as usize).collect::<Vec<_>>(), shape));
            let val = pos.map_or(init, |p| x[p]);
            if k == 0 || (if is_min { val <= best } else { val >= best }) {
                best = val;
                chosen = pos;
            }
        }
        if let Some(p) = chosen {
            out[p] += v;
        }
    }
    out
}

#[test]
fn window_scatter_picks_the_last_extreme_and_skips_padding() {
    let mut rng = Rng::new(92);
    let cases = [
        (vec![4, 6], vec![2, 3], vec![2, 3], vec![(0, 0), (0, 0)]),
        (vec![4, 5], vec![2, 3], vec![2, 2], vec![(0, 0), (0, 0)]),
        (
            vec![2, 2, 2, 4],
            vec![1, 1, 2, 2],
            vec![1, 1, 2, 2],
            vec![(0, 0); 4],
        ),
        (vec![5, 5], vec![3, 3], vec![2, 2], vec![(1, 1), (2, 0)]),
        (vec![7], vec![3], vec![1], vec![(2, 2)]),
    ];
    for (shape, dims, strides, padding) in cases {
        let s = WindowSpec {
            dims: dims.clone(),
            strides: strides.clone(),
            padding: padding.clone(),
            dilations: vec![1; shape.len()],
        };
        let wshape = s.output_shape(&shape, "test").unwrap();
        let n: usize = shape.iter().product();
        // Few distinct values, so ties are common.
        let x: Vec<i32> = (0..n).map(|_| rng.int(0, 4) as i32).collect();
        let src: Vec<i32> = (0..wshape.iter().product())
            .map(|_| rng.int(1, 9) as i32)
            .collect();
        for is_min in [false, true] {
            for init in [0i32, 2, 9] {
                let want = scatter_reference(
                    is_min,
                    &x.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    &shape,
                    &s,
                    &src.iter().map(|&v| v as f64).collect::<Vec<_>>(),
                    init as f64,
                );
                let got = window_scatter(
                    is_min,
                    &upload(&shape, DType::S32, &x),
                    &upload(&wshape, DType::S32, &src),
                    &upload(&[], DType::S32, &[init]),
                    &dims,
                    &strides,
                    &padding,
                    DType::S32,
                )
                .unwrap();
                assert_eq!(got.shape, shape);
                let want: Vec<i32> = want.iter().map(|&v| v as i32).collect();
                assert_eq!(
                    download::<i32>(&got),
                    want,
                    "min={is_min} init={init} {shape:?} {s:?}"
                );
            }
        }
        let xf: Vec<f32> = x
            .iter()
            .map(|&v| if v == 3 { f32::NAN } else { v as f32 * 0.5 })
            .collect();
        let srcf: Vec<f32> = src.iter().map(|&v| v as f32 * 0.25).collect();
        let want = scatter_reference(
            false,
            &xf.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            &shape,
            &s,
            &srcf.iter().map(|&v| v as f64).collect::<Vec<_>>(),
            -1.0,
        );
        let got = window_scatter(
            false,
            &upload(&shape, DType::F32, &xf),
            &upload(&wshape, DType::F32, &srcf),
            &upload(&[], DType::F32, &[-1f32]),
            &dims,
            &strides,
            &padding,
            DType::F32,
        )
        .unwrap();
        let want: Vec<f32> = want.iter().map(|&v| v as f32).collect();
        assert_eq!(download::<f32>(&got), want, "f32 with NaN {shape:?} {s:?}");
    }
    let t = upload(&[4], DType::S32, &[1i32, 2, 3, 4]);
    let bad = window_scatter(
        false,
        &t,
        &upload(&[3], DType::S32, &[1i32, 1, 1]),
        &upload(&[], DType::S32, &[0i32]),
        &[2],
        &[2],
        &[(0, 0)],
        DType::S32,
    );
    assert!(matches!(bad, Err(Error::InvalidArgument(_))));
}

#[test]
fn zero_ties_go_to_the_later_element() {
    // Nx.BinaryBackend folds a window as `max(x, acc)`: on a tie of 0.0 and -0.0 the later
    // element wins (a reduction's fold keeps the earlier: tests/reduce.rs).
    let x = [0.0f32, -0.0, 0.0, -0.0];
    let t = upload(&[4], DType::F32, &x);
    let s = spec(&[2], &[1], &[(0, 0)], &[1]);
    for op in [ReduceOp::Max, ReduceOp::Min] {
        let got: Vec<f32> = download(&window_reduce(op, &t, &s, DType::F32).unwrap());
        let signs: Vec<bool> = got.iter().map(|v| v.is_sign_negative()).collect();
        assert_eq!(signs, [true, false, true], "{op:?}: {got:?}");
    }
}
