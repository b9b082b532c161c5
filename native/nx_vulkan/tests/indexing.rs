//! select, clip and gather against CPU references.
mod common;

use common::*;
use nx_vulkan::ops::indexing::{clip, gather, select};
use nx_vulkan::DType;

/// numpy-style broadcast of `v` (shape `shape`) to `out`.
fn bcast<T: Elem>(v: &[T], shape: &[usize], out: &[usize]) -> Vec<T> {
    (0..numel(out))
        .map(|i| v[numpy_index(&unravel(i, out), shape)])
        .collect()
}

fn check_select<T: Elem>(
    dtype: DType,
    p: (&[usize], &[u8]),
    a: (&[usize], &[T]),
    b: (&[usize], &[T]),
    out: &[usize],
) {
    let pt = upload(p.0, DType::U8, p.1);
    let at = upload(a.0, dtype, a.1);
    let bt = upload(b.0, dtype, b.1);
    let got: Vec<T> = download(&select(&pt, &at, &bt, out, dtype).unwrap());
    let (pp, aa, bb) = (
        bcast(p.1, p.0, out),
        bcast(a.1, a.0, out),
        bcast(b.1, b.0, out),
    );
    let want: Vec<T> = (0..numel(out))
        .map(|i| if pp[i] != 0 { aa[i] } else { bb[i] })
        .collect();
    assert_eq!(
        got, want,
        "select {dtype:?} {:?} {:?} {:?} -> {out:?}",
        p.0, a.0, b.0
    );
}

#[test]
fn select_every_width_with_broadcasting() {
    let mut rng = Rng::new(11);
    let out = [3, 4, 5];
    let pred: Vec<u8> = (0..60).map(|_| (rng.next_u32() % 3) as u8).collect();
    let a64: Vec<f64> = (0..60).map(|i| i as f64 + 0.5).collect();
    let b64 = [-1.25f64];
    check_select(DType::F64, (&out, &pred), (&out, &a64), (&[], &b64), &out);
    let a8: Vec<u8> = (0..20).map(|i| i as u8).collect();
    let b8: Vec<u8> = (0..60).map(|i| 200 - i as u8).collect();
    check_select(DType::U8, (&out, &pred), (&[4, 5], &a8), (&out, &b8), &out);
    let a16: Vec<u16> = (0..5).map(|i| 1000 + i).collect();
    let b16: Vec<u16> = (0..3).map(|i| 7 * i).collect();
    check_select(
        DType::S16,
        (&[1, 4, 1], &pred[..4]),
        (&[5], &a16),
        (&[3, 1, 1], &b16),
        &out,
    );
    let a32 = rng.f32s(60, -5.0, 5.0);
    check_select(
        DType::F32,
        (&[], &[1]),
        (&out, &a32),
        (&[], &[0.0f32]),
        &out,
    );
    check_select(
        DType::F32,
        (&[], &[0]),
        (&out, &a32),
        (&[], &[0.0f32]),
        &out,
    );
}

#[test]
fn select_above_the_kernel_rank() {
    let out = [2, 3, 2, 3, 2];
    let n = numel(&out);
    let pred: Vec<u8> = (0..n).map(|i| (i % 3 == 0) as u8).collect();
    let a: Vec<i32> = (0..n as i32).collect();
    let b: Vec<i32> = (0..3).map(|i| -i).collect();
    check_select(
        DType::S32,
        (&out, &pred),
        (&out, &a),
        (&[3, 1, 1, 1], &b),
        &out,
    );
}

#[test]
fn select_reads_float_predicates_by_value() {
    // -0.0 is zero, NaN is nonzero.
    let p = upload(&[4], DType::F32, &[-0.0f32, 0.0, f32::NAN, 2.0]);
    let a = upload(&[4], DType::S32, &[1i32, 2, 3, 4]);
    let b = upload(&[], DType::S32, &[0i32]);
    let got: Vec<i32> = download(&select(&p, &a, &b, &[4], DType::S32).unwrap());
    assert_eq!(got, vec![0, 0, 3, 4]);
}

#[test]
fn select_converts_branches_to_the_output_type() {
    let p = upload(&[3], DType::U8, &[1u8, 0, 1]);
    let a = upload(&[3], DType::S32, &[1i32, 2, 3]);
    let b = upload(&[], DType::F32, &[0.5f32]);
    let got: Vec<f32> = download(&select(&p, &a, &b, &[3], DType::F32).unwrap());
    assert_eq!(got, vec![1.0, 0.5, 3.0]);
}

#[test]
fn clip_follows_binary_backend() {
    let x = upload(&[6], DType::F32, &[-3.0f32, 0.5, 7.0, f32::NAN, 2.0, 4.0]);
    let lo = upload(&[], DType::F32, &[0.0f32]);
    let hi = upload(&[], DType::F32, &[4.0f32]);
    let got: Vec<f32> = download(&clip(&x, &lo, &hi, DType::F32).unwrap());
    // NaN > 0 is false, so NaN becomes the minimum.
    assert_eq!(got, vec![0.0, 0.5, 4.0, 0.0, 2.0, 4.0]);
    let xi = upload(&[4], DType::S64, &[i64::MIN, -1, 5, i64::MAX]);
    let lo = upload(&[], DType::S64, &[-2i64]);
    let hi = upload(&[], DType::S64, &[3i64]);
    let got: Vec<i64> = download(&clip(&xi, &lo, &hi, DType::S64).unwrap());
    assert_eq!(got, vec![-2, -1, 3, 3]);
}

#[test]
fn clip_orders_values_before_they_round_to_the_result_type() {
    // bf16 -2.94e-39 and -1e-39 (subnormal) are below 0.0 but round to f16 -0.0; Nx
    // compares the values and keeps them, so their sign survives: -0.0, not max's +0.0.
    let x = upload(&[4], DType::BF16, &[0x8020u16, 0x000b, 0x800b, 0x4000]);
    let lo = upload(&[], DType::F16, &[0xbc00u16]); // -1.0
    let hi = upload(&[], DType::F16, &[0x0000u16]); // +0.0
    let got: Vec<u16> = download(&clip(&x, &lo, &hi, DType::F16).unwrap());
    assert_eq!(got, vec![0x8000, 0x0000, 0x8000, 0x0000]);
}

/// CPU gather with clamped indices.
fn gather_ref<T: Elem>(t: &[T], shape: &[usize], idx: &[i64], k: usize, axes: &[usize]) -> Vec<T> {
    let other: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let other_shape: Vec<usize> = other.iter().map(|&d| shape[d]).collect();
    let inner = numel(&other_shape);
    let rows = idx.len() / k;
    let mut out = Vec::new();
    for r in 0..rows {
        for j in 0..inner {
            let oc = unravel(j, &other_shape);
            let mut c = vec![0usize; shape.len()];
            for (q, &a) in axes.iter().enumerate() {
                c[a] = idx[r * k + q].clamp(0, shape[a] as i64 - 1) as usize;
            }
            for (q, &d) in other.iter().enumerate() {
                c[d] = oc[q];
            }
            out.push(t[ravel(&c, shape)]);
        }
    }
    out
}

#[test]
fn gather_axes_in_any_order_with_clamping() {
    let shape = [3, 4, 5];
    let t: Vec<f32> = (0..60).map(|i| i as f32).collect();
    let tt = upload(&shape, DType::F32, &t);
    for axes in [
        vec![0],
        vec![1],
        vec![2],
        vec![2, 0],
        vec![1, 2],
        vec![0, 1, 2],
        vec![2, 1, 0],
    ] {
        let k = axes.len();
        let idx: Vec<i64> = (0..6 * k as i64).map(|i| (i * 7) % 9 - 2).collect();
        let it = upload(&[2, 3, k], DType::S64, &idx);
        let got = gather(&tt, &it, &axes).unwrap();
        let mut want_shape = vec![2, 3];
        want_shape.extend((0..3).filter(|d| !axes.contains(d)).map(|d| shape[d]));
        assert_eq!(got.shape, want_shape, "axes {axes:?}");
        assert_eq!(
            download::<f32>(&got),
            gather_ref(&t, &shape, &idx, k, &axes),
            "axes {axes:?}"
        );
    }
}

#[test]
fn gather_every_width_and_index_type() {
    let shape = [5, 3];
    let idx: Vec<i64> = vec![4, 0, 2, 9, -1];
    let cases: [(DType, Vec<u8>); 5] = [
        (
            DType::U8,
            idx.iter().map(|&x| x.clamp(0, 255) as u8).collect(),
        ),
        (DType::S8, idx.iter().map(|&x| x as i8 as u8).collect()),
        (
            DType::S16,
            idx.iter().flat_map(|&x| (x as i16).to_le_bytes()).collect(),
        ),
        (
            DType::U32,
            idx.iter()
                .flat_map(|&x| (x.max(0) as u32).to_le_bytes())
                .collect(),
        ),
        (
            DType::U64,
            idx.iter()
                .flat_map(|&x| (x.max(0) as u64).to_le_bytes())
                .collect(),
        ),
    ];
    for (ity, bytes) in cases {
        let it = nx_vulkan::Tensor::from_bytes(&[5, 1], ity, &bytes).unwrap();
        let as_i64: Vec<i64> = match ity {
            DType::U8 | DType::U32 | DType::U64 => idx.iter().map(|&x| x.max(0)).collect(),
            _ => idx.clone(),
        };
        let t8: Vec<u8> = (0..15).collect();
        let got: Vec<u8> = download(&gather(&upload(&shape, DType::U8, &t8), &it, &[0]).unwrap());
        assert_eq!(
            got,
            gather_ref(&t8, &shape, &as_i64, 1, &[0]),
            "u8 by {ity:?}"
        );
        let t16: Vec<u16> = (0..15).map(|i| 300 + i).collect();
        let got: Vec<u16> =
            download(&gather(&upload(&shape, DType::F16, &t16), &it, &[0]).unwrap());
        assert_eq!(
            got,
            gather_ref(&t16, &shape, &as_i64, 1, &[0]),
            "f16 by {ity:?}"
        );
        let t64: Vec<i64> = (0..15).map(|i| -(1i64 << 40) * i).collect();
        let got: Vec<i64> =
            download(&gather(&upload(&shape, DType::S64, &t64), &it, &[0]).unwrap());
        assert_eq!(
            got,
            gather_ref(&t64, &shape, &as_i64, 1, &[0]),
            "s64 by {ity:?}"
        );
    }
}

#[test]
fn gather_rejects_bad_indices() {
    let t = upload(&[3, 4], DType::F32, &[0f32; 12]);
    let idx = upload(&[2, 2], DType::S32, &[0i32; 4]);
    assert!(gather(&t, &idx, &[0]).is_err(), "k != len(axes)");
    assert!(gather(&t, &idx, &[0, 0]).is_err(), "repeated axis");
    assert!(gather(&t, &idx, &[0, 2]).is_err(), "axis out of range");
    let fidx = upload(&[2, 1], DType::F32, &[0f32; 2]);
    assert!(gather(&t, &fidx, &[0]).is_err(), "float indices");
}

/// CPU indexed_put / indexed_add (clamped indices, last put wins, sums in f64 / i64).
fn indexed_ref(
    target: &[f64],
    shape: &[usize],
    idx: &[i64],
    upd: &[f64],
    axes: &[usize],
    add: bool,
) -> Vec<f64> {
    let k = axes.len();
    let other: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).collect();
    let other_shape: Vec<usize> = other.iter().map(|&d| shape[d]).collect();
    let inner = numel(&other_shape);
    let mut out = target.to_vec();
    for u in 0..idx.len() / k {
        for j in 0..inner {
            let oc = unravel(j, &other_shape);
            let mut c = vec![0usize; shape.len()];
            for (q, &a) in axes.iter().enumerate() {
                c[a] = idx[u * k + q].clamp(0, shape[a] as i64 - 1) as usize;
            }
            for (q, &d) in other.iter().enumerate() {
                c[d] = oc[q];
            }
            let at = ravel(&c, shape);
            out[at] = if add {
                out[at] + upd[u * inner + j]
            } else {
                upd[u * inner + j]
            };
        }
    }
    out
}

#[test]
fn indexed_put_and_add_with_repeats_and_clamping() {
    use nx_vulkan::ops::scatter::{indexed_add, indexed_put};
    let shape = [4, 3, 5];
    let target: Vec<f64> = (0..60).map(|i| i as f64).collect();
    for axes in [vec![0], vec![1], vec![0, 2], vec![0, 1, 2]] {
        let k = axes.len();
        let rows = 7;
        let idx: Vec<i64> = (0..(rows * k) as i64).map(|i| (i * 5) % 7 - 1).collect();
        let mut ushape = vec![rows];
        ushape.extend((0..3).filter(|d| !axes.contains(d)).map(|d| shape[d]));
        let upd: Vec<f64> = (0..numel(&ushape)).map(|i| 100.0 + i as f64).collect();
        let it = upload(
            &[rows, k],
            DType::S32,
            &idx.iter().map(|&x| x as i32).collect::<Vec<_>>(),
        );
        for (ty, add) in [
            (DType::F32, false),
            (DType::F32, true),
            (DType::S16, true),
            (DType::F64, true),
            (DType::S64, true),
            (DType::U8, false),
        ] {
            let cast = |v: &[f64]| -> nx_vulkan::Tensor {
                match ty {
                    DType::F32 => upload(
                        &[v.len()],
                        ty,
                        &v.iter().map(|&x| x as f32).collect::<Vec<_>>(),
                    ),
                    DType::F64 => upload(&[v.len()], ty, v),
                    DType::S16 => upload(
                        &[v.len()],
                        ty,
                        &v.iter().map(|&x| x as i16).collect::<Vec<_>>(),
                    ),
                    DType::S64 => upload(
                        &[v.len()],
                        ty,
                        &v.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                    ),
                    _ => upload(
                        &[v.len()],
                        ty,
                        &v.iter().map(|&x| x as u8).collect::<Vec<_>>(),
                    ),
                }
            };
            let tt = cast(&target).reshape(&shape).unwrap();
            let ut = cast(&upd).reshape(&ushape).unwrap();
            let got = if add {
                indexed_add(&tt, &it, &ut, &axes, ty).unwrap()
            } else {
                indexed_put(&tt, &it, &ut, &axes, ty).unwrap()
            };
            let want = indexed_ref(&target, &shape, &idx, &upd, &axes, add);
            let got: Vec<f64> = match ty {
                DType::F32 => download::<f32>(&got).iter().map(|&x| x as f64).collect(),
                DType::F64 => download::<f64>(&got),
                DType::S16 => download::<i16>(&got).iter().map(|&x| x as f64).collect(),
                DType::S64 => download::<i64>(&got).iter().map(|&x| x as f64).collect(),
                _ => download::<u8>(&got).iter().map(|&x| x as f64).collect(),
            };
            let want: Vec<f64> = match ty {
                DType::U8 => want.iter().map(|&x| (x as i64 as u8) as f64).collect(),
                _ => want,
            };
            assert_eq!(got, want, "{ty:?} add={add} axes={axes:?}");
        }
    }
}

#[test]
fn indexed_ops_reject_bad_shapes() {
    use nx_vulkan::ops::scatter::indexed_add;
    let t = upload(&[3, 4], DType::F32, &[0f32; 12]);
    let idx = upload(&[2, 1], DType::S32, &[0i32, 1]);
    let wrong = upload(&[2, 3], DType::F32, &[0f32; 6]);
    assert!(indexed_add(&t, &idx, &wrong, &[0], DType::F32).is_err());
    let upd = upload(&[2, 4], DType::F32, &[0f32; 8]);
    assert!(indexed_add(&t, &idx, &upd, &[0, 1], DType::F32).is_err());
}
