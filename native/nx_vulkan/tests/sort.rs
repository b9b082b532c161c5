//! sort and argsort against a stable CPU sort with Nx's order (NaN last ascending, first
//! descending; ties keep their order).
mod common;

use common::*;
use nx_vulkan::ops::sort::{argsort, sort};
use nx_vulkan::DType;
use std::cmp::Ordering;

/// Nx's order of two values (as f64; NaN greatest ascending, first descending).
fn nx_order(a: f64, b: f64, desc: bool) -> Ordering {
    let ord = match (a.is_nan(), b.is_nan()) {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Greater,
        (false, true) => Ordering::Less,
        _ => a.partial_cmp(&b).unwrap(),
    };
    // Descending reverses the whole order, so NaN comes first.
    if desc {
        ord.reverse()
    } else {
        ord
    }
}

/// Stable argsort of `v` (shape `shape`) along `axis`.
fn argsort_ref(v: &[f64], shape: &[usize], axis: usize, desc: bool) -> Vec<usize> {
    let n = shape[axis];
    let mut out = vec![0usize; v.len()];
    for start in 0..v.len() {
        let c = unravel(start, shape);
        if c[axis] != 0 {
            continue;
        }
        let at = |i: usize| {
            let mut c = c.clone();
            c[axis] = i;
            ravel(&c, shape)
        };
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&x, &y| nx_order(v[at(x)], v[at(y)], desc));
        for (i, &o) in order.iter().enumerate() {
            out[at(i)] = o;
        }
    }
    out
}

fn check(shape: &[usize], axis: usize, desc: bool, v: &[f64]) {
    let want_idx = argsort_ref(v, shape, axis, desc);
    let gather_axis = |idx: &[usize]| -> Vec<f64> {
        (0..v.len())
            .map(|i| {
                let mut c = unravel(i, shape);
                c[axis] = idx[i];
                v[ravel(&c, shape)]
            })
            .collect()
    };
    let want_vals = gather_axis(&want_idx);
    // f32 and f64 (floats with NaN), s8 and u64 (integers, many ties).
    let f32s: Vec<f32> = v.iter().map(|&x| x as f32).collect();
    let t = upload(shape, DType::F32, &f32s);
    let got: Vec<i64> = download(&argsort(&t, axis, desc, DType::S64).unwrap());
    assert_eq!(
        got,
        want_idx.iter().map(|&x| x as i64).collect::<Vec<_>>(),
        "f32 argsort {shape:?} axis {axis} desc {desc}"
    );
    let got: Vec<f32> = download(&sort(&t, axis, desc).unwrap());
    let want: Vec<f32> = want_vals.iter().map(|&x| x as f32).collect();
    assert_eq!(
        format!("{got:?}"),
        format!("{want:?}"),
        "f32 sort {shape:?} axis {axis} desc {desc}"
    );
    let t = upload(shape, DType::F64, v);
    let got: Vec<u32> = download(&argsort(&t, axis, desc, DType::U32).unwrap());
    assert_eq!(
        got,
        want_idx.iter().map(|&x| x as u32).collect::<Vec<_>>(),
        "f64 argsort"
    );
    if v.iter().all(|x| !x.is_nan()) {
        let ints: Vec<i8> = v.iter().map(|&x| x as i8).collect();
        let iv: Vec<f64> = ints.iter().map(|&x| x as f64).collect();
        let t = upload(shape, DType::S8, &ints);
        let got: Vec<i32> = download(&argsort(&t, axis, desc, DType::S32).unwrap());
        let want = argsort_ref(&iv, shape, axis, desc);
        assert_eq!(
            got,
            want.iter().map(|&x| x as i32).collect::<Vec<_>>(),
            "s8 argsort"
        );
        let big: Vec<u64> = v.iter().map(|&x| (x.abs() as u64) << 40).collect();
        let bv: Vec<f64> = big.iter().map(|&x| x as f64).collect();
        let t = upload(shape, DType::U64, &big);
        let got: Vec<u64> = download(&sort(&t, axis, desc).unwrap());
        let idx = argsort_ref(&bv, shape, axis, desc);
        let want: Vec<u64> = (0..v.len())
            .map(|i| {
                let mut c = unravel(i, shape);
                c[axis] = idx[i];
                big[ravel(&c, shape)]
            })
            .collect();
        assert_eq!(got, want, "u64 sort");
    }
}

fn data(n: usize, rng: &mut Rng, nans: bool) -> Vec<f64> {
    (0..n)
        .map(|_| {
            let r = rng.next_u32() % 40;
            if nans && r == 0 {
                f64::NAN
            } else if r == 1 {
                f64::INFINITY
            } else if r == 2 {
                f64::NEG_INFINITY
            } else {
                (rng.next_u32() % 21) as f64 - 10.0
            }
        })
        .collect()
}

#[test]
fn sort_rows_in_shared_memory() {
    let mut rng = Rng::new(21);
    for desc in [false, true] {
        check(&[1], 0, desc, &data(1, &mut rng, true));
        check(&[7], 0, desc, &data(7, &mut rng, true));
        check(&[3, 33], 1, desc, &data(99, &mut rng, true));
        check(&[33, 3], 0, desc, &data(99, &mut rng, false));
        check(&[2, 5, 4], 1, desc, &data(40, &mut rng, false));
        check(&[2048], 0, desc, &data(2048, &mut rng, true));
    }
}

#[test]
fn sort_long_rows_in_global_memory() {
    let mut rng = Rng::new(22);
    for desc in [false, true] {
        check(&[2049], 0, desc, &data(2049, &mut rng, true));
        check(&[2, 3000], 1, desc, &data(6000, &mut rng, false));
    }
}

#[test]
fn sort_edge_cases() {
    let s = upload(&[], DType::F32, &[3.0f32]);
    assert_eq!(download::<f32>(&sort(&s, 0, false).unwrap()), vec![3.0]);
    assert_eq!(
        download::<i32>(&argsort(&s, 0, false, DType::S32).unwrap()),
        vec![0]
    );
    let e = upload::<f32>(&[2, 0], DType::F32, &[]);
    assert_eq!(sort(&e, 1, false).unwrap().shape, vec![2, 0]);
    let t = upload(&[3], DType::F32, &[1.0f32, 2.0, 3.0]);
    assert!(sort(&t, 1, false).is_err());
    assert!(argsort(&t, 0, false, DType::F32).is_err());
    // -0.0 and 0.0 tie, so they keep their order.
    let z = upload(&[4], DType::F32, &[0.0f32, -0.0, 0.0, -0.0]);
    assert_eq!(
        download::<i32>(&argsort(&z, 0, false, DType::S32).unwrap()),
        vec![0, 1, 2, 3]
    );
}
