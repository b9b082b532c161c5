//! Reductions (sum, product, max, min, all, any) and argmax/argmin.
//!
//! f32 sums use integer-valued data, so every order of addition is exact and results
//! compare bit for bit; f32 products use values in [0.5, 2] and allow (len + 1) * 2^-24
//! relative, the rounding bound of any order of `len` multiplications (the kernel's tree
//! order differs from the host's). Integer results are exact (wrapping arithmetic is
//! associative).

mod common;

use common::*;
use nx_vulkan::ops::reduce::{argreduce, reduce, ReduceOp};
use nx_vulkan::{DType, Error, Tensor};
use ReduceOp::*;

const OPS: [ReduceOp; 6] = [Sum, Product, Max, Min, All, Any];

/// Axis sets worth trying on a tensor of rank `r`: none given (all), each single axis,
/// non-adjacent pairs, and all but one.
fn axis_sets(r: usize) -> Vec<Option<Vec<usize>>> {
    let mut v: Vec<Option<Vec<usize>>> = vec![None];
    v.extend((0..r).map(|a| Some(vec![a])));
    if r >= 3 {
        v.push(Some(vec![0, 2]));
        v.push(Some(vec![2, 0])); // unsorted input
        v.push(Some((1..r).collect()));
    }
    if r >= 4 {
        v.push(Some(vec![1, 3]));
        v.push(Some(vec![0, 3]));
    }
    v
}

fn f32_ref(
    op: ReduceOp,
    x: &[f32],
    shape: &[usize],
    axes: &[usize],
    keep: bool,
) -> (Vec<usize>, Vec<f32>) {
    let nan_max = |a: f32, b: f32| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.max(b)
        }
    };
    let nan_min = |a: f32, b: f32| {
        if a.is_nan() || b.is_nan() {
            f32::NAN
        } else {
            a.min(b)
        }
    };
    match op {
        Sum => reduce_ref(x, shape, axes, keep, 0.0f32, |a, b| a + b),
        Product => {
            let (s, v) = reduce_ref(x, shape, axes, keep, 1.0f64, |a, b| a * b as f64);
            (s, v.into_iter().map(|p| p as f32).collect())
        }
        Max => reduce_ref(x, shape, axes, keep, f32::NEG_INFINITY, nan_max),
        Min => reduce_ref(x, shape, axes, keep, f32::INFINITY, nan_min),
        All => reduce_ref(x, shape, axes, keep, 1.0f32, |a, b| {
            (a != 0.0 && b != 0.0) as u8 as f32
        }),
        Any => reduce_ref(x, shape, axes, keep, 0.0f32, |a, b| {
            (a != 0.0 || b != 0.0) as u8 as f32
        }),
    }
}

fn i32_ref(
    op: ReduceOp,
    x: &[i32],
    shape: &[usize],
    axes: &[usize],
    keep: bool,
) -> (Vec<usize>, Vec<i32>) {
    match op {
        Sum => reduce_ref(x, shape, axes, keep, 0i32, |a, b| a.wrapping_add(b)),
        Product => reduce_ref(x, shape, axes, keep, 1i32, |a, b| a.wrapping_mul(b)),
        Max => reduce_ref(x, shape, axes, keep, i32::MIN, |a, b| a.max(b)),
        Min => reduce_ref(x, shape, axes, keep, i32::MAX, |a, b| a.min(b)),
        All => reduce_ref(x, shape, axes, keep, 1i32, |a, b| (a != 0 && b != 0) as i32),
        Any => reduce_ref(x, shape, axes, keep, 0i32, |a, b| (a != 0 || b != 0) as i32),
    }
}

fn run(op: ReduceOp, t: &Tensor, axes: &Option<Vec<usize>>, keep: bool, out: DType) -> Tensor {
    let out = if matches!(op, All | Any) {
        DType::U8
    } else {
        out
    };
    let r = reduce(op, t, axes.as_deref(), keep, out)
        .unwrap_or_else(|e| panic!("{op:?} {axes:?}: {e}"));
    assert_eq!(r.dtype, out);
    r
}

#[test]
fn f32_and_s32_over_axis_sets() {
    let mut rng = Rng::new(40);
    // [4100, 3] over axis 0: a column reduction long enough for two passes.
    let shapes: [&[usize]; 7] = [
        &[],
        &[7],
        &[3, 4],
        &[2, 3, 4],
        &[3, 5, 2, 4],
        &[2, 1, 300, 3],
        &[4100, 3],
    ];
    for shape in shapes {
        let n = numel(shape);
        let r = shape.len();
        // Integers in [-8, 8] (zeros included, for all/any); products stay near 1.
        let xs: Vec<f32> = (0..n).map(|_| rng.int(-8, 8) as f32).collect();
        let xp: Vec<f32> = (0..n).map(|_| rng.log_uniform(0.5, 2.0) as f32).collect();
        let xi: Vec<i32> = (0..n)
            .map(|i| {
                if i % 3 == 0 {
                    rng.int(-3, 3) as i32
                } else {
                    rng.next_u32() as i32
                }
            })
            .collect();
        let (ts, tp, ti) = (
            upload(shape, DType::F32, &xs),
            upload(shape, DType::F32, &xp),
            upload(shape, DType::S32, &xi),
        );
        for axes in axis_sets(r) {
            let ax: Vec<usize> = axes.clone().unwrap_or_else(|| (0..r).collect());
            for keep in [false, true] {
                for op in OPS {
                    let ctx = format!("{op:?} of {shape:?} over {axes:?} keep={keep}");
                    let (x, t) = if op == Product {
                        (&xp, &tp)
                    } else {
                        (&xs, &ts)
                    };
                    let (want_shape, want) = f32_ref(op, x, shape, &ax, keep);
                    let got = run(op, t, &axes, keep, DType::F32);
                    assert_eq!(got.shape, want_shape, "{ctx}");
                    if matches!(op, All | Any) {
                        let w: Vec<u8> = want.iter().map(|&v| v as u8).collect();
                        assert_eq!(download::<u8>(&got), w, "f32 {ctx}");
                    } else if op == Product {
                        // Any order of len multiplications is within (len - 1) ulp-halves.
                        let len: usize = ax.iter().map(|&a| shape[a]).product();
                        let w: Vec<f64> = want.iter().map(|&v| v as f64).collect();
                        assert_close(
                            &download::<f32>(&got),
                            &w,
                            (len + 1) as f64 * 6e-8,
                            0.0,
                            &ctx,
                        );
                    } else {
                        assert_eq!(download::<f32>(&got), want, "f32 {ctx}");
                    }
                    let (_, want) = i32_ref(op, &xi, shape, &ax, keep);
                    let got = run(op, &ti, &axes, keep, DType::S32);
                    if matches!(op, All | Any) {
                        let w: Vec<u8> = want.iter().map(|&v| v as u8).collect();
                        assert_eq!(download::<u8>(&got), w, "s32 {ctx}");
                    } else {
                        assert_eq!(download::<i32>(&got), want, "s32 {ctx}");
                    }
                }
            }
        }
    }
}

#[test]
fn u8_all_any_and_widening_sum() {
    let mut rng = Rng::new(41);
    let shape = [4, 5, 6];
    // Mostly ones, so `all` is sometimes true along an axis.
    let x: Vec<u8> = (0..120)
        .map(|_| {
            if rng.next_u32().is_multiple_of(9) {
                0
            } else {
                (rng.next_u32() % 255 + 1) as u8
            }
        })
        .collect();
    let t = upload(&shape, DType::U8, &x);
    for axes in axis_sets(3) {
        let ax: Vec<usize> = axes.clone().unwrap_or_else(|| vec![0, 1, 2]);
        let (_, all) = reduce_ref(&x, &shape, &ax, false, 1u8, |a, b| (a != 0 && b != 0) as u8);
        let (_, any) = reduce_ref(&x, &shape, &ax, false, 0u8, |a, b| (a != 0 || b != 0) as u8);
        assert_eq!(
            download::<u8>(&run(All, &t, &axes, false, DType::U8)),
            all,
            "all {axes:?}"
        );
        assert_eq!(
            download::<u8>(&run(Any, &t, &axes, false, DType::U8)),
            any,
            "any {axes:?}"
        );
        // Summing u8 into u32 must not wrap at 256.
        let (_, sum) = reduce_ref(&x, &shape, &ax, false, 0u32, |a, b| a + b as u32);
        assert_eq!(
            download::<u32>(&run(Sum, &t, &axes, false, DType::U32)),
            sum,
            "sum {axes:?}"
        );
    }
}

#[test]
fn empty_reductions_give_identities() {
    let e = Tensor::from_bytes(&[3, 0], DType::F32, &[]).unwrap();
    let ax = Some(vec![1]);
    let f = |op, keep| download::<f32>(&run(op, &e, &ax, keep, DType::F32));
    assert_eq!(f(Sum, false), vec![0.0; 3]);
    assert_eq!(f(Product, false), vec![1.0; 3]);
    assert_eq!(f(Max, false), vec![f32::NEG_INFINITY; 3]);
    assert_eq!(f(Min, true), vec![f32::INFINITY; 3]);
    assert_eq!(
        download::<u8>(&run(All, &e, &ax, false, DType::U8)),
        vec![1; 3]
    );
    assert_eq!(
        download::<u8>(&run(Any, &e, &ax, false, DType::U8)),
        vec![0; 3]
    );
    let ei = Tensor::from_bytes(&[3, 0], DType::S32, &[]).unwrap();
    assert_eq!(
        download::<i32>(&run(Max, &ei, &ax, false, DType::S32)),
        vec![i32::MIN; 3]
    );
    assert_eq!(
        download::<i32>(&run(Min, &ei, &ax, false, DType::S32)),
        vec![i32::MAX; 3]
    );
    assert_eq!(
        download::<i32>(&run(Sum, &ei, &None, false, DType::S32)),
        vec![0]
    );
    // Reducing the non-empty axis leaves an empty result.
    let r = run(Sum, &e, &Some(vec![0]), false, DType::F32);
    assert_eq!(r.shape, vec![0]);
    assert!(r.to_bytes().unwrap().is_empty());
    // Narrow types: the identity is the output type's own minimum / maximum.
    let e8 = Tensor::from_bytes(&[2, 0], DType::S8, &[]).unwrap();
    assert_eq!(
        download::<i8>(&run(Max, &e8, &ax, false, DType::S8)),
        vec![i8::MIN; 2]
    );
    assert_eq!(
        download::<i8>(&run(Min, &e8, &ax, false, DType::S8)),
        vec![i8::MAX; 2]
    );
    let eu = Tensor::from_bytes(&[2, 0], DType::U16, &[]).unwrap();
    assert_eq!(
        download::<u16>(&run(Min, &eu, &ax, false, DType::U16)),
        vec![u16::MAX; 2]
    );
    assert_eq!(
        download::<u16>(&run(Max, &eu, &ax, false, DType::U16)),
        vec![0; 2]
    );
}

#[test]
fn bad_axes_are_errors() {
    let t = upload(&[2, 3], DType::F32, &[0f32; 6]);
    assert!(matches!(
        reduce(Sum, &t, Some(&[2]), false, DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        argreduce(&t, Some(2), false, false, false, DType::S32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        argreduce(&t, None, false, false, false, DType::F32),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn long_rows_are_exact() {
    // 2^24 + 3 ones: a sequential f32 sum sticks at 2^24; the chunked partials do not.
    // 16777219 itself is not an f32: the correctly rounded f32 result is 16777220.
    let n = (1 << 24) + 3;
    let t = Tensor::from_bytes(&[n], DType::F32, &bytes(&vec![1.0f32; n])).unwrap();
    let s: Vec<f32> = download(&reduce(Sum, &t, None, false, DType::F32).unwrap());
    assert_eq!(s, vec![16_777_219.0f32]);
    assert_eq!(s[0], 16_777_220.0);
    let s: Vec<f64> = download(&reduce(Sum, &t, None, false, DType::F64).unwrap());
    assert_eq!(s, vec![16_777_219.0]);

    // 1000 x 5000 along either axis: integer data, exact sums; max too.
    let mut rng = Rng::new(42);
    let shape = [1000, 5000];
    let x: Vec<f32> = (0..numel(&shape)).map(|_| rng.int(-4, 4) as f32).collect();
    let t = upload(&shape, DType::F32, &x);
    for axis in [0, 1] {
        let (_, want) = reduce_ref(&x, &shape, &[axis], false, 0f32, |a, b| a + b);
        assert_eq!(
            download::<f32>(&reduce(Sum, &t, Some(&[axis]), false, DType::F32).unwrap()),
            want,
            "sum axis {axis}"
        );
        let (_, want) = reduce_ref(&x, &shape, &[axis], true, f32::NEG_INFINITY, f32::max);
        assert_eq!(
            download::<f32>(&reduce(Max, &t, Some(&[axis]), true, DType::F32).unwrap()),
            want,
            "max axis {axis}"
        );
    }
}

#[test]
fn nan_propagates_through_max_and_min() {
    // Rows of 5 (one pass) and of 20000 (two passes), NaN at varying positions.
    for len in [5usize, 20_000] {
        let rows = 4;
        let mut x: Vec<f32> = (0..rows * len).map(|i| (i % 97) as f32 - 40.0).collect();
        x[len - 1] = f32::NAN; // row 0: last
        x[len] = f32::NAN; // row 1: first
        x[3 * len + len / 2] = f32::NAN; // row 3: middle; row 2 has none
        let t = upload(&[rows, len], DType::F32, &x);
        for op in [Max, Min] {
            let got: Vec<f32> = download(&reduce(op, &t, Some(&[1]), false, DType::F32).unwrap());
            let (_, want) = f32_ref(op, &x, &[rows, len], &[1], false);
            for r in 0..rows {
                assert!(
                    got[r] == want[r] || (got[r].is_nan() && want[r].is_nan()),
                    "{op:?} len {len} row {r}: {} vs {}",
                    got[r],
                    want[r]
                );
            }
        }
        let s: Vec<f32> = download(&reduce(Sum, &t, Some(&[1]), false, DType::F32).unwrap());
        assert!(s[0].is_nan() && s[1].is_nan() && !s[2].is_nan() && s[3].is_nan());
    }
}

#[test]
fn zero_ties_go_to_the_first_zero() {
    // max and min of rows whose extreme is zero in both signs: the first of them wins, as
    // Nx.BinaryBackend's left fold keeps its accumulator on a tie. Rows of 7 (a thread
    // each), 1,000 (threads read strided elements) and 20,000 (two passes), each sign
    // first somewhere; f32 and f64 (both the f32 path and the f64 one).
    for len in [7usize, 1_000, 20_000] {
        let rows = 6;
        let mut x = vec![1.5f64; rows * len];
        for r in 0..rows {
            // Everything positive for min, negative for max, then the zeros.
            let first = (r * 131 + 3) % len;
            let second = (first + 1 + r * 37) % len;
            for k in 0..len {
                x[r * len + k] = if r % 2 == 0 {
                    1.5 + k as f64
                } else {
                    -1.5 - k as f64
                };
            }
            let (a, b) = if r < 3 { (0.0, -0.0) } else { (-0.0, 0.0) };
            x[r * len + first.min(second)] = a;
            if first != second {
                x[r * len + first.max(second)] = b;
            }
        }
        for dtype in [DType::F32, DType::F64] {
            let t = if dtype == DType::F32 {
                upload(
                    &[rows, len],
                    dtype,
                    &x.iter().map(|&v| v as f32).collect::<Vec<_>>(),
                )
            } else {
                upload(&[rows, len], dtype, &x)
            };
            for op in [Max, Min] {
                let got = reduce(op, &t, Some(&[1]), false, dtype)
                    .unwrap()
                    .to_bytes()
                    .unwrap();
                let width = dtype.size();
                for r in 0..rows {
                    // Rows of positives reduce by min to their first zero; negatives by max.
                    if (op == Min) != (r % 2 == 0) {
                        continue;
                    }
                    let first_zero = x[r * len..(r + 1) * len]
                        .iter()
                        .find(|v| **v == 0.0)
                        .unwrap();
                    let negative = got[r * width + width - 1] & 0x80 != 0;
                    assert_eq!(
                        negative,
                        first_zero.is_sign_negative(),
                        "{op:?} {dtype:?} len {len} row {r}"
                    );
                }
            }
        }
    }
}

/// argmax / argmin reference: a NaN wins over every number for both (as Nx 0.13's
/// argmin([2.0, NaN, 4.0]) == 1 shows) and the last of several NaNs wins whatever the tie
/// break (Nx.BinaryBackend: argmax([NaN, 3.0, NaN, 1.0]) == 2); ties go to the lowest
/// index, or the highest with `tie_high`. `nan_last: false` treats NaNs as equal values
/// instead (the integer stand-ins of the NaNs below).
fn arg_ref(x: &[f32], is_min: bool, tie_high: bool, nan_last: bool) -> usize {
    use std::cmp::Ordering::*;
    let cmp = |a: f32, b: f32| match (a.is_nan(), b.is_nan()) {
        (true, true) => Equal,
        (true, false) => Greater,
        (false, true) => Less,
        _ => a.partial_cmp(&b).unwrap(),
    };
    let mut best = 0;
    for i in 1..x.len() {
        let better = match (x[i].is_nan(), x[best].is_nan()) {
            (true, true) if nan_last => true,
            (true, false) => true,
            (false, true) => false,
            _ => match cmp(x[i], x[best]) {
                Equal => tie_high,
                Greater => !is_min,
                Less => is_min,
            },
        };
        if better {
            best = i;
        }
    }
    best
}

#[test]
fn argmax_argmin_ties_nan_keep_axis() {
    let mut rng = Rng::new(43);
    let shapes: [&[usize]; 5] = [&[1], &[9], &[4, 6], &[3, 4, 5], &[2, 700]];
    for shape in shapes {
        let n = numel(shape);
        // Few distinct values: many ties, spread over the 256 lanes of a long row.
        let mut x: Vec<f32> = (0..n).map(|_| rng.int(-3, 3) as f32).collect();
        if n > 8 {
            x[n / 3] = f32::NAN;
            x[n / 2] = f32::INFINITY;
            x[n - 2] = f32::NAN;
        }
        let t = upload(shape, DType::F32, &x);
        let xi: Vec<i32> = x
            .iter()
            .map(|&v| {
                if v.is_nan() {
                    9
                } else if v.is_infinite() {
                    8
                } else {
                    v as i32
                }
            })
            .collect();
        let ti = upload(shape, DType::S32, &xi);
        // For argmin a NaN must rank below every number to win, as it does in floats.
        let xi_min: Vec<i32> = x
            .iter()
            .zip(&xi)
            .map(|(v, &i)| if v.is_nan() { -9 } else { i })
            .collect();
        let ti_min = upload(shape, DType::S32, &xi_min);
        let mut axes: Vec<Option<usize>> = vec![None];
        axes.extend((0..shape.len()).map(Some));
        for axis in axes {
            for (is_min, tie_high, keep) in [
                (false, false, false),
                (false, true, true),
                (true, false, true),
                (true, true, false),
            ] {
                let ctx =
                    format!("{shape:?} axis {axis:?} min={is_min} tie_high={tie_high} keep={keep}");
                let lanes = |nan_last: bool| match axis {
                    None => (vec![], vec![arg_ref(&x, is_min, tie_high, nan_last)]),
                    Some(a) => {
                        // Gather each lane along axis `a` and take its arg.
                        let kept: Vec<usize> = shape
                            .iter()
                            .enumerate()
                            .map(|(i, &d)| if i == a { 1 } else { d })
                            .collect();
                        let out: Vec<usize> = (0..numel(&kept))
                            .map(|k| {
                                let base = unravel(k, &kept);
                                let lane: Vec<f32> = (0..shape[a])
                                    .map(|j| {
                                        let mut idx = base.clone();
                                        idx[a] = j;
                                        x[ravel(&idx, shape)]
                                    })
                                    .collect();
                                arg_ref(&lane, is_min, tie_high, nan_last)
                            })
                            .collect();
                        let s = if keep {
                            kept
                        } else {
                            shape
                                .iter()
                                .enumerate()
                                .filter(|&(i, _)| i != a)
                                .map(|(_, &d)| d)
                                .collect()
                        };
                        (s, out)
                    }
                };
                let (want_shape, want) = lanes(true);
                let got = argreduce(&t, axis, keep, is_min, tie_high, DType::S64).unwrap();
                assert_eq!(got.shape, want_shape, "{ctx}");
                assert_eq!(
                    download::<i64>(&got),
                    want.iter().map(|&i| i as i64).collect::<Vec<_>>(),
                    "f32 {ctx}"
                );
                // Same order on integers (NaN -> 9 for argmax, -9 for argmin; inf -> 8), into s32.
                let ints = if is_min { &ti_min } else { &ti };
                let got = argreduce(ints, axis, keep, is_min, tie_high, DType::S32).unwrap();
                let (_, want) = lanes(false);
                assert_eq!(
                    download::<i32>(&got),
                    want.iter().map(|&i| i as i32).collect::<Vec<_>>(),
                    "s32 {ctx}"
                );
            }
        }
    }
}

#[test]
fn argmax_of_all_nan() {
    let t = upload(&[2, 3], DType::F32, &[f32::NAN; 6]);
    let lo: Vec<i32> = download(&argreduce(&t, Some(1), false, false, false, DType::S32).unwrap());
    let hi: Vec<i32> = download(&argreduce(&t, Some(1), false, true, true, DType::S32).unwrap());
    // The last NaN wins in both tie modes (Nx.BinaryBackend).
    assert_eq!((lo, hi), (vec![2, 2], vec![2, 2]));
}

fn argmax_of_long_row(n: usize) {
    let mut x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32).collect();
    x[n - 2] = 5000.0;
    x[777] = 4999.0;
    let t = Tensor::from_bytes(&[n], DType::F32, &bytes(&x)).unwrap();
    let got: Vec<i64> = download(&argreduce(&t, None, false, false, false, DType::S64).unwrap());
    assert_eq!(got, vec![n as i64 - 2]);
    let got: Vec<i32> = download(&argreduce(&t, None, false, true, false, DType::S32).unwrap());
    assert_eq!(got, vec![0]);
}

#[test]
fn argmax_of_a_long_row() {
    // One workgroup folds a whole row: 16,000,000 elements is 62,500 steps per lane.
    argmax_of_long_row(16_000_000);
}

#[test]
fn argmax_of_a_row_past_the_lavapipe_loop_limit() {
    // Index n - 2 > 2^24 would also show an index stored through a float.
    argmax_of_long_row((1 << 24) + 5);
}

/// all/any count an f32 subnormal as nonzero, as Nx does, also where the driver's f32
/// compares flush it to zero (NVIDIA's: a plain `!= 0` gave all([1e-40]) = 0 there).
#[test]
fn all_and_any_count_f32_subnormals_as_nonzero() {
    let t = upload(&[3], DType::F32, &[1e-40f32, 1.0, -1e-45]);
    let all: Vec<u8> = download(&run(All, &t, &None, false, DType::U8));
    assert_eq!(all, vec![1]);
    let t = upload(&[2], DType::F32, &[0.0f32, 1e-40]);
    let any: Vec<u8> = download(&run(Any, &t, &None, false, DType::U8));
    assert_eq!(any, vec![1]);
}
