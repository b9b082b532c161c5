//! Complex numbers (c64, c128) against references computed here in f64 with the formulas
//! of the `complex` library Nx.BinaryBackend uses: conversions, element-wise ops (mixed
//! with real operands and broadcast), special values, sum/product, dot, conv,
//! indexed_add/put, select and the 16-byte moves of c128.

mod common;

use common::complex::*;
use common::*;
use nx_vulkan::ops::complex::fft;
use nx_vulkan::ops::conv::{conv, ConvSpec};
use nx_vulkan::ops::creation::{constant, iota, Scalar};
use nx_vulkan::ops::elementwise::{as_type, binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::ops::{dot::dot, indexing, scatter, shape};
use nx_vulkan::{DType, Error};

/// A reference for a binary op.
type Ref2 = fn(C, C) -> C;

#[test]
fn conversions_to_and_from_complex() {
    let ints = upload(&[3], DType::S32, &[1i32, -2, 7]);
    let c = as_type(&ints, DType::C64).unwrap();
    assert_exact(
        &down(&c),
        &[(1.0, 0.0), (-2.0, 0.0), (7.0, 0.0)],
        DType::C64,
        "s32->c64",
    );
    let z = up(&[3], DType::C64, &[(-1.5, 2.0), (2.75, 3.0), (3.0, -4.0)]);
    // Complex to real keeps the real part; to integers it truncates toward zero.
    let f = as_type(&z, DType::F64).unwrap();
    assert_eq!(download::<f64>(&f), vec![-1.5, 2.75, 3.0]);
    let s = as_type(&z, DType::S64).unwrap();
    assert_eq!(download::<i64>(&s), vec![-1, 2, 3]);
    let wide = as_type(&z, DType::C128).unwrap();
    assert_exact(
        &down(&wide),
        &[(-1.5, 2.0), (2.75, 3.0), (3.0, -4.0)],
        DType::C128,
        "c64->c128",
    );
    let back = as_type(&wide, DType::C64).unwrap();
    assert_eq!(back.to_bytes().unwrap(), z.to_bytes().unwrap());
    // Real and imaginary parts, conjugate of a real tensor (imaginary -0.0 as Nx).
    let re = unary(UnaryOp::Identity, &z, DType::F32).unwrap();
    let im = unary(UnaryOp::Imag, &z, DType::F32).unwrap();
    assert_eq!(download::<f32>(&re), vec![-1.5, 2.75, 3.0]);
    assert_eq!(download::<f32>(&im), vec![2.0, 3.0, -4.0]);
    let conj = unary(
        UnaryOp::Conjugate,
        &upload(&[1], DType::F32, &[2.0f32]),
        DType::C64,
    )
    .unwrap();
    let v = down(&conj);
    assert!(v[0] == (2.0, 0.0) && v[0].1.is_sign_negative());
}

#[test]
fn constants_and_iota() {
    let c = constant(&[2, 2], DType::C64, Scalar::Complex(1.0, -1.0)).unwrap();
    assert_exact(&down(&c), &[(1.0, -1.0); 4], DType::C64, "constant");
    // Larger than the host-fill limit: a broadcast of 16-byte elements.
    let big = constant(&[5000], DType::C128, Scalar::Complex(0.5, 2.0)).unwrap();
    assert!(down(&big).iter().all(|&v| v == (0.5, 2.0)));
    let i = iota(&[2, 3], DType::C64, Some(1)).unwrap();
    let want: Vec<C> = [0.0, 1.0, 2.0, 0.0, 1.0, 2.0]
        .iter()
        .map(|&x| (x, 0.0))
        .collect();
    assert_exact(&down(&i), &want, DType::C64, "iota");
}

#[test]
fn arithmetic_with_broadcasting_and_real_operands() {
    for ty in [DType::C64, DType::C128] {
        let a = sample(12, 1);
        let b = sample(4, 2);
        let (ta, tb) = (up(&[3, 4], ty, &a), up(&[4], ty, &b));
        let cases: [(BinaryOp, Ref2); 4] = [
            (BinaryOp::Add, |x, y| (x.0 + y.0, x.1 + y.1)),
            (BinaryOp::Subtract, |x, y| (x.0 - y.0, x.1 - y.1)),
            (BinaryOp::Multiply, mul),
            (BinaryOp::Divide, div),
        ];
        for (op, f) in cases {
            let got = down(&binary(op, &ta, &tb, &[3, 4], ty).unwrap());
            let want: Vec<C> = (0..12).map(|i| f(a[i], b[i % 4])).collect();
            assert_exact(&got, &want, ty, &format!("{op:?} {ty:?}"));
        }
        // A real operand is a complex one with imaginary part 0.
        let r = upload(&[3, 1], DType::S32, &[2i32, -3, 5]);
        let got = down(&binary(BinaryOp::Multiply, &ta, &r, &[3, 4], ty).unwrap());
        let want: Vec<C> = (0..12)
            .map(|i| mul(a[i], ([2.0, -3.0, 5.0][i / 4], 0.0)))
            .collect();
        assert_exact(&got, &want, ty, "complex * s32");
        let eq = binary(BinaryOp::Equal, &ta, &ta, &[3, 4], DType::U8).unwrap();
        assert_eq!(download::<u8>(&eq), vec![1; 12]);
        let ne = binary(BinaryOp::NotEqual, &ta, &tb, &[3, 4], DType::U8).unwrap();
        let want: Vec<u8> = (0..12).map(|i| (a[i] != b[i % 4]) as u8).collect();
        assert_eq!(download::<u8>(&ne), want);
    }
}

#[test]
fn division_by_zero_and_special_values() {
    let inf = f64::INFINITY;
    let nan = f64::NAN;
    let z = [
        (1.0, 0.0),
        (0.0, 0.0),
        (-2.0, 3.0),
        (nan, 0.0),
        (inf, 1.0),
        (0.0, -inf),
    ];
    let t = up(&[6], DType::C64, &z);
    let zero = up(&[1], DType::C64, &[(0.0, 0.0)]);
    let q = down(&binary(BinaryOp::Divide, &t, &zero, &[6], DType::C64).unwrap());
    let want: Vec<C> = z.iter().map(|&x| div(x, (0.0, 0.0))).collect();
    assert_exact(&q, &want, DType::C64, "x / 0");
    let nan_flags = unary(UnaryOp::IsNan, &t, DType::U8).unwrap();
    assert_eq!(download::<u8>(&nan_flags), vec![0, 0, 0, 1, 0, 0]);
    let inf_flags = unary(UnaryOp::IsInfinity, &t, DType::U8).unwrap();
    assert_eq!(download::<u8>(&inf_flags), vec![0, 0, 0, 0, 1, 1]);
    let abs = unary(UnaryOp::Abs, &t, DType::F32).unwrap();
    let want: Vec<f32> = z.iter().map(|&x| cabs(x) as f32).collect();
    let got = download::<f32>(&abs);
    for (g, w) in got.iter().zip(&want) {
        assert!(
            same(*g as f64, *w as f64),
            "abs: got {got:?}, want {want:?}"
        );
    }
}

#[test]
fn abs_sqrt_negate_conjugate() {
    let mut z = sample(64, 3);
    z.extend([
        (-4.0, 0.0),
        (-4.0, -0.0),
        (0.0, 0.0),
        (3.0, 4.0),
        (1e300, 1e300),
    ]);
    for ty in [DType::C64, DType::C128] {
        let z: Vec<C> = if ty == DType::C64 {
            z.iter().filter(|v| v.0.abs() < 1e30).copied().collect()
        } else {
            z.clone()
        };
        let t = up(&[z.len()], ty, &z);
        let got = down(&unary(UnaryOp::Sqrt, &t, ty).unwrap());
        let want: Vec<C> = z.iter().map(|&x| csqrt(x)).collect();
        if ty == DType::C64 {
            assert_exact(&got, &want, ty, "sqrt");
        } else {
            assert_ulps(&got, &want, "sqrt c128");
        }
        let neg = down(&unary(UnaryOp::Negate, &t, ty).unwrap());
        assert_exact(
            &neg,
            &z.iter().map(|v| (-v.0, -v.1)).collect::<Vec<_>>(),
            ty,
            "negate",
        );
        let conj = down(&unary(UnaryOp::Conjugate, &t, ty).unwrap());
        assert_exact(
            &conj,
            &z.iter().map(|v| (v.0, -v.1)).collect::<Vec<_>>(),
            ty,
            "conjugate",
        );
        let real = ty.component();
        let abs = as_type(&unary(UnaryOp::Abs, &t, real).unwrap(), DType::F64).unwrap();
        let want: Vec<f64> = z
            .iter()
            .map(|&v| {
                if real == DType::F32 {
                    cabs(v) as f32 as f64
                } else {
                    cabs(v)
                }
            })
            .collect();
        let as_pairs = |v: Vec<f64>| v.iter().map(|&x| (x, 0.0)).collect::<Vec<C>>();
        assert_ulps(&as_pairs(download::<f64>(&abs)), &as_pairs(want), "abs");
    }
}

#[test]
fn unsupported_ops_say_so() {
    let t = up(&[2], DType::C64, &[(1.0, 1.0), (2.0, 0.0)]);
    // (erf of complex numbers is defined only for zero imaginary parts: tests/complex_real.rs.)
    assert!(
        matches!(
            unary(UnaryOp::Floor, &t, DType::C64),
            Err(Error::Unsupported(_))
        ),
        "Floor"
    );
    let r = binary(BinaryOp::Less, &t, &t, &[2], DType::U8);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    let r = reduce(ReduceOp::Max, &t, None, false, DType::C64);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    // A complex predicate for select is refused (no kernel reads it yet).
    let r = indexing::select(&t, &t, &t, &[2], DType::C64);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    // Empty reductions of c128 give the identity.
    let empty = constant(&[0, 3], DType::C128, Scalar::Int(0)).unwrap();
    let p = reduce(ReduceOp::Product, &empty, Some(&[0]), false, DType::C128).unwrap();
    assert_eq!(down(&p), vec![(1.0, 0.0); 3]);
}

#[test]
fn sum_and_product_over_axes() {
    let z = sample(24, 4);
    for ty in [DType::C64, DType::C128] {
        let t = up(&[2, 3, 4], ty, &z);
        for axes in [vec![0], vec![1], vec![2], vec![0, 2], vec![0, 1, 2]] {
            for (op, init, f) in [
                (
                    ReduceOp::Sum,
                    (0.0, 0.0),
                    (|a: C, x: C| (a.0 + x.0, a.1 + x.1)) as fn(C, C) -> C,
                ),
                (ReduceOp::Product, (1.0, 0.0), |a: C, x: C| mul(x, a)),
            ] {
                let (shape, want) = reduce_ref(&z, &[2, 3, 4], &axes, false, init, f);
                let got = reduce(op, &t, Some(&axes), false, ty).unwrap();
                assert_eq!(got.shape, shape);
                assert_near(&down(&got), &want, 1e-6, &format!("{op:?} {axes:?} {ty:?}"));
            }
        }
    }
}

/// out[i][j] = sum_k a[i][k] b[k][j] in f64.
fn matmul(a: &[C], b: &[C], m: usize, k: usize, n: usize) -> Vec<C> {
    (0..m * n)
        .map(|o| {
            (0..k).fold((0.0, 0.0), |acc, t| {
                let p = mul(a[o / n * k + t], b[t * n + o % n]);
                (acc.0 + p.0, acc.1 + p.1)
            })
        })
        .collect()
}

#[test]
fn dot_of_complex_and_mixed_operands() {
    let (m, k, n) = (5, 7, 3);
    let (a, b) = (sample(m * k, 5), sample(k * n, 6));
    for ty in [DType::C64, DType::C128] {
        let got = dot(
            &up(&[m, k], ty, &a),
            &[1],
            &[],
            &up(&[k, n], ty, &b),
            &[0],
            &[],
            ty,
        )
        .unwrap();
        assert_eq!(got.shape, vec![m, n]);
        assert_near(
            &down(&got),
            &matmul(&a, &b, m, k, n),
            1e-7,
            &format!("dot {ty:?}"),
        );
    }
    // Real right operand.
    let br: Vec<f32> = b.iter().map(|v| v.0 as f32).collect();
    let breal = upload(&[k, n], DType::F32, &br);
    let got = dot(
        &up(&[m, k], DType::C64, &a),
        &[1],
        &[],
        &breal,
        &[0],
        &[],
        DType::C64,
    )
    .unwrap();
    let bc: Vec<C> = b.iter().map(|v| (v.0, 0.0)).collect();
    assert_near(
        &down(&got),
        &matmul(&a, &bc, m, k, n),
        1e-7,
        "dot c64 x f32",
    );
}

#[test]
fn conv_of_complex_matches_nx_example() {
    // Nx.conv/3's complex doctest: no conjugation of the kernel.
    let x = up(
        &[1, 1, 3],
        DType::C64,
        &[(1.0, 1.0), (2.0, 0.0), (3.0, -3.0)],
    );
    let w = up(
        &[1, 1, 3],
        DType::C64,
        &[(1.0, 0.0), (0.0, 2.0), (0.0, 3.0)],
    );
    let spec = ConvSpec {
        strides: vec![1],
        padding: vec![(2, 2)],
        input_dilation: vec![1],
        kernel_dilation: vec![1],
        feature_groups: 1,
        batch_groups: 1,
        input_permutation: vec![0, 1, 2],
        kernel_permutation: vec![0, 1, 2],
        output_permutation: vec![0, 1, 2],
    };
    let got = down(&conv(&x, &w, &spec, DType::C64).unwrap());
    let want = [
        (-3.0, 3.0),
        (-2.0, 8.0),
        (10.0, 14.0),
        (8.0, 6.0),
        (3.0, -3.0),
    ];
    assert_exact(&got, &want, DType::C64, "conv");
}

/// The DFT of each row of `x` ([rows, len]) with `n` points, in f64.
#[test]
fn movement_of_16_byte_elements() {
    let z = sample(24, 8);
    let t = up(&[2, 3, 4], DType::C128, &z);
    let tr = shape::transpose(&t, &[2, 0, 1]).unwrap();
    let (_, want) = transpose_ref(&z, &[2, 3, 4], &[2, 0, 1]);
    assert_exact(&down(&tr), &want, DType::C128, "transpose");
    let sl = shape::slice(&t, &[1, 0, 1], &[1, 3, 2], &[1, 2, 1]).unwrap();
    let want: Vec<C> = [(1, 0, 1), (1, 0, 2), (1, 2, 1), (1, 2, 2)]
        .iter()
        .map(|&(a, b, c)| z[a * 12 + b * 4 + c])
        .collect();
    assert_exact(&down(&sl), &want, DType::C128, "slice");
    let cat = shape::concatenate(&[t.clone(), t.clone()], 0, DType::C128).unwrap();
    assert_exact(
        &down(&cat),
        &[z.clone(), z.clone()].concat(),
        DType::C128,
        "concatenate",
    );
}

#[test]
fn select_gather_and_indexed_updates() {
    let z = sample(6, 9);
    let u = sample(2, 10);
    let t = up(&[3, 2], DType::C64, &z);
    let pred = upload(&[3, 1], DType::U8, &[1u8, 0, 1]);
    let other = up(&[], DType::C64, &[(9.0, -9.0)]);
    let s = down(&indexing::select(&pred, &t, &other, &[3, 2], DType::C64).unwrap());
    let want: Vec<C> = (0..6)
        .map(|i| if i / 2 != 1 { z[i] } else { (9.0, -9.0) })
        .collect();
    assert_exact(&s, &want, DType::C64, "select");
    let idx = upload(&[2, 1], DType::S32, &[2i32, 0]);
    let g = down(&indexing::gather(&t, &idx, &[0]).unwrap());
    assert_exact(&g, &[z[4], z[5], z[0], z[1]], DType::C64, "gather");
    for ty in [DType::C64, DType::C128] {
        let t = up(&[3, 2], ty, &z);
        let upd = up(&[2, 2], ty, &[u[0], u[1], u[1], u[0]]);
        let put = down(&scatter::indexed_put(&t, &idx, &upd, &[0], ty).unwrap());
        let want = vec![u[1], u[0], z[2], z[3], u[0], u[1]];
        assert_exact(&put, &want, ty, "indexed_put");
        let add = down(&scatter::indexed_add(&t, &idx, &upd, &[0], ty).unwrap());
        let plus = |a: C, b: C| (a.0 + b.0, a.1 + b.1);
        let want = vec![
            plus(z[0], u[1]),
            plus(z[1], u[0]),
            z[2],
            z[3],
            plus(z[4], u[0]),
            plus(z[5], u[1]),
        ];
        assert_exact(&add, &want, ty, "indexed_add");
    }
}

/// Transforms of more points than one launch sums (32,768) continue the sum across
/// launches: impulses at j = 3 and j = 32,790 (the second launch's range) give
/// X_k = a w^(3k) + b w^(32790k) exactly up to the twiddles' and the sum's rounding:
/// forward in c64, inverse (scaled by 1/n) in c128 (each takes ~15 s on lavapipe).
#[test]
fn transforms_longer_than_one_launch() {
    let n = 32_800;
    let (a, b) = ((1.0, 0.0), (0.0, 2.0));
    for (ty, inverse) in [(DType::C64, false), (DType::C128, true)] {
        let mut x = vec![(0.0, 0.0); n];
        x[3] = a;
        x[32_790] = b;
        let t = up(&[n], ty, &x);
        {
            let got = down(&fft(&t, n, 0, 0.0, inverse, ty).unwrap());
            let sign = if inverse { 1.0 } else { -1.0 };
            let scale = if inverse { 1.0 / n as f64 } else { 1.0 };
            let tol = if ty == DType::C64 { 1e-6 } else { 1e-14 };
            for (k, &(re, im)) in got.iter().enumerate() {
                let w = |j: usize| {
                    let th = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    (th.cos(), th.sin())
                };
                let ((c1, s1), (c2, s2)) = (w(3), w(32_790));
                let want = (
                    scale * (a.0 * c1 - a.1 * s1 + b.0 * c2 - b.1 * s2),
                    scale * (a.0 * s1 + a.1 * c1 + b.0 * s2 + b.1 * c2),
                );
                assert!(
                    (re - want.0).abs() <= tol * scale * 3.0
                        && (im - want.1).abs() <= tol * scale * 3.0,
                    "{ty:?} inverse={inverse} k={k}: got ({re}, {im}) want {want:?}"
                );
            }
        }
    }
}

/// Products and sums over more elements per output than one launch folds (32,768)
/// continue across launches; exact here: ones with a few i's and a 2.
#[test]
fn folds_longer_than_one_launch() {
    let n = 40_000;
    let mut x = vec![(1.0, 0.0); 2 * n];
    x[5] = (0.0, 1.0);
    x[35_000] = (0.0, 1.0);
    x[n + 100] = (2.0, 0.0);
    x[n + 39_999] = (0.0, 1.0);
    for ty in [DType::C64, DType::C128] {
        let t = up(&[2, n], ty, &x);
        let p = reduce(ReduceOp::Product, &t, Some(&[1]), false, ty).unwrap();
        assert_eq!(down(&p), vec![(-1.0, 0.0), (0.0, 2.0)], "{ty:?} product");
        let s = reduce(ReduceOp::Sum, &t, Some(&[1]), false, ty).unwrap();
        assert_eq!(
            down(&s),
            vec![(39_998.0, 2.0), (40_000.0, 1.0)],
            "{ty:?} sum"
        );
    }
}
