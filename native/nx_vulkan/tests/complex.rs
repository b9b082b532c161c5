//! Complex numbers (c64, c128) against references computed here in f64 with the formulas
//! of the `complex` library Nx.BinaryBackend uses: conversions, element-wise ops (mixed
//! with real operands and broadcast), special values, sum/product, dot, conv, fft/ifft,
//! indexed_add/put, select and the 16-byte moves of c128.

mod common;

use common::*;
use nx_vulkan::ops::complex::fft;
use nx_vulkan::ops::conv::{conv, ConvSpec};
use nx_vulkan::ops::creation::{constant, iota, Scalar};
use nx_vulkan::ops::elementwise::{as_type, binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::ops::triangular::{triangular_solve, TransformA, TriangularSolveOpts, SINGULAR};
use nx_vulkan::ops::{dot::dot, indexing, scatter, shape};
use nx_vulkan::{DType, Error, Tensor};

type C = (f64, f64);
/// A reference for a binary op.
type Ref2 = fn(C, C) -> C;

fn up(shape: &[usize], ty: DType, v: &[C]) -> Tensor {
    let flat: Vec<f64> = v.iter().flat_map(|&(a, b)| [a, b]).collect();
    match ty {
        DType::C64 => {
            let f: Vec<f32> = flat.iter().map(|&x| x as f32).collect();
            Tensor::from_bytes(shape, ty, &bytes(&f)).unwrap()
        }
        _ => Tensor::from_bytes(shape, ty, &bytes(&flat)).unwrap(),
    }
}

fn down(t: &Tensor) -> Vec<C> {
    let b = t.to_bytes().unwrap();
    let flat: Vec<f64> = match t.dtype {
        DType::C64 => values::<f32>(&b).iter().map(|&x| x as f64).collect(),
        DType::C128 => values::<f64>(&b),
        other => panic!("not complex: {other:?}"),
    };
    flat.chunks(2).map(|p| (p[0], p[1])).collect()
}

fn same(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b
}

/// Exact agreement after rounding the reference to the output type.
fn assert_exact(got: &[C], want: &[C], ty: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let round = |x: f64| if ty == DType::C64 { x as f32 as f64 } else { x };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            same(g.0, round(w.0)) && same(g.1, round(w.1)),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

/// Agreement within 2 ulps of each part (c128 sqrt and abs: NVIDIA's f64 sqrt formula
/// came out 1 ulp from the reference on the H200; lavapipe's is exact).
fn assert_ulps(got: &[C], want: &[C], what: &str) {
    let close = |a: f64, b: f64| same(a, b) || (a - b).abs() <= 2.0 * f64::EPSILON * b.abs();
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            close(g.0, w.0) && close(g.1, w.1),
            "{what}: element {i}: got {g:?}, want {w:?}"
        );
    }
}

/// Agreement within `rel` of the larger magnitude in the row (sums of products).
fn assert_near(got: &[C], want: &[C], rel: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want
        .iter()
        .map(|w| w.0.abs().max(w.1.abs()))
        .fold(1.0, f64::max);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.0 - w.0).abs() <= rel * scale && (g.1 - w.1).abs() <= rel * scale;
        assert!(ok, "{what}: element {i}: got {g:?}, want {w:?}");
    }
}

fn mul(a: C, b: C) -> C {
    (a.0 * b.0 - a.1 * b.1, a.1 * b.0 + a.0 * b.1)
}

fn div(a: C, b: C) -> C {
    let den = b.0 * b.0 + b.1 * b.1;
    ((a.0 * b.0 + a.1 * b.1) / den, (a.1 * b.0 - a.0 * b.1) / den)
}

fn cabs(z: C) -> f64 {
    let (x, y) = (z.0.abs(), z.1.abs());
    if z.0.is_nan() && z.1.is_nan() {
        f64::NAN
    } else if !z.0.is_finite() || !z.1.is_finite() {
        f64::INFINITY
    } else if x == 0.0 {
        y
    } else if y == 0.0 {
        x
    } else if x > y {
        x * (1.0 + y / x * (y / x)).sqrt()
    } else {
        y * (1.0 + x / y * (x / y)).sqrt()
    }
}

fn csqrt(z: C) -> C {
    let (r, i) = z;
    if r.is_nan() || i.is_nan() {
        return (f64::NAN, f64::NAN);
    }
    if i.is_infinite() {
        return (f64::INFINITY, i);
    }
    if r.is_infinite() {
        return if r > 0.0 {
            (f64::INFINITY, 0.0)
        } else {
            (0.0, f64::INFINITY)
        };
    }
    if r == 0.0 && i == 0.0 {
        return z;
    }
    let (x, y) = (r.abs(), i.abs());
    let w = if x >= y {
        x.sqrt() * (0.5 * (1.0 + (1.0 + y / x * (y / x)).sqrt())).sqrt()
    } else {
        y.sqrt() * (0.5 * (x / y + (1.0 + x / y * (x / y)).sqrt())).sqrt()
    };
    if r >= 0.0 {
        (w, i / (2.0 * w))
    } else {
        let w2 = if i >= 0.0 { w } else { -w };
        (i / (2.0 * w2), w2)
    }
}

/// Values whose f32 rounding is exact (so c64 and c128 references agree).
fn sample(n: usize, seed: u64) -> Vec<C> {
    let mut r = Rng::new(seed);
    (0..n)
        .map(|_| {
            let q = |r: &mut Rng| (r.uniform(-64.0, 64.0) * 16.0).round() / 16.0;
            (q(&mut r), q(&mut r))
        })
        .collect()
}

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
    for op in [UnaryOp::Exp, UnaryOp::Floor] {
        assert!(
            matches!(unary(op, &t, DType::C64), Err(Error::Unsupported(_))),
            "{op:?}"
        );
    }
    let r = binary(BinaryOp::Less, &t, &t, &[2], DType::U8);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    let r = reduce(ReduceOp::Max, &t, None, false, DType::C64);
    assert!(matches!(r, Err(Error::Unsupported(_))));
    // Serial loops beyond lavapipe's limit are refused, not run wrong.
    let long = constant(&[40_000], DType::C64, Scalar::Complex(1.0, 0.0)).unwrap();
    assert!(matches!(
        fft(&long, 40_000, 0, 0.0, false, DType::C64),
        Err(Error::Unsupported(_))
    ));
    let r = reduce(ReduceOp::Product, &long, None, false, DType::C64);
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
fn dft_ref(x: &[C], rows: usize, len: usize, n: usize, inverse: bool) -> Vec<C> {
    let sign = if inverse { 1.0 } else { -1.0 };
    let mut out = Vec::new();
    for r in 0..rows {
        for k in 0..n {
            let mut acc = (0.0, 0.0);
            for j in 0..len.min(n) {
                let a = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                let p = mul(x[r * len + j], (a.cos(), a.sin()));
                acc = (acc.0 + p.0, acc.1 + p.1);
            }
            if inverse {
                acc = (acc.0 / n as f64, acc.1 / n as f64);
            }
            out.push(acc);
        }
    }
    out
}

#[test]
fn fft_and_ifft_against_the_definition() {
    let (rows, len) = (3, 12);
    let x = sample(rows * len, 7);
    for ty in [DType::C64, DType::C128] {
        let t = up(&[rows, len], ty, &x);
        // Same length, zero-padded to 16, truncated to 5.
        for n in [12, 16, 5] {
            for inverse in [false, true] {
                let got = fft(&t, n, 1, 0.0, inverse, ty).unwrap();
                assert_eq!(got.shape, vec![rows, n]);
                let want = dft_ref(&x, rows, len, n, inverse);
                assert_near(
                    &down(&got),
                    &want,
                    1e-6,
                    &format!("n={n} inverse={inverse} {ty:?}"),
                );
            }
        }
        // ifft(fft(x)) is x.
        let round = fft(
            &fft(&t, len, 1, 0.0, false, ty).unwrap(),
            len,
            1,
            0.0,
            true,
            ty,
        )
        .unwrap();
        assert_near(&down(&round), &x, 1e-6, "round trip");
    }
    // Along axis 0 of a real input: the transform of each column.
    let cols: Vec<i32> = (0..12).map(|i| i * 7 % 5).collect();
    let t = upload(&[4, 3], DType::S32, &cols);
    let got = down(&fft(&t, 4, 0, 1e-10, false, DType::C64).unwrap());
    let colmajor: Vec<C> = (0..12)
        .map(|i| (cols[(i % 4) * 3 + i / 4] as f64, 0.0))
        .collect();
    let want_t = dft_ref(&colmajor, 3, 4, 4, false);
    let want: Vec<C> = (0..12).map(|i| want_t[(i % 3) * 4 + i / 3]).collect();
    assert_near(&got, &want, 1e-6, "axis 0");
    // Parts within eps become exact zeros (the imaginary parts of [1, 1, 0, 0]'s
    // transform at k = 0 and 2).
    let t = upload(&[4], DType::S32, &[1i32, 1, 0, 0]);
    let got = down(&fft(&t, 4, 0, 1e-10, false, DType::C64).unwrap());
    assert_eq!(got, vec![(2.0, 0.0), (1.0, -1.0), (0.0, 0.0), (1.0, 1.0)]);
}

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

#[test]
fn triangular_solve_of_complex_systems() {
    let i = |x: f64| (0.0, x);
    let r = |x: f64| (x, 0.0);
    // Nx.LinAlg.triangular_solve/3's complex doctest.
    let a = [
        r(1.0),
        r(0.0),
        r(0.0),
        r(1.0),
        i(1.0),
        r(0.0),
        i(1.0),
        r(1.0),
        r(1.0),
    ];
    let b = [r(1.0), r(-1.0), (3.0, 3.0)];
    let opts = |transform_a| TriangularSolveOpts {
        left_side: true,
        lower: true,
        transform_a,
    };
    for ty in [DType::C64, DType::C128] {
        let (ta, tb) = (up(&[3, 3], ty, &a), up(&[3], ty, &b));
        let x = triangular_solve(&ta, &tb, opts(TransformA::None), ty).unwrap();
        assert_exact(&down(&x), &[r(1.0), i(2.0), r(3.0)], ty, "doctest");
        // :conjugate conjugates A without transposing it: check conj(A) x = b.
        let x = down(&triangular_solve(&ta, &tb, opts(TransformA::Conjugate), ty).unwrap());
        for row in 0..3 {
            let s = (0..=row).fold((0.0, 0.0), |acc, j| {
                let p = mul((a[row * 3 + j].0, -a[row * 3 + j].1), x[j]);
                (acc.0 + p.0, acc.1 + p.1)
            });
            assert!(
                (s.0 - b[row].0).abs() < 1e-6 && (s.1 - b[row].1).abs() < 1e-6,
                "conj row {row}"
            );
        }
        let zero_diag = up(&[2, 2], ty, &[r(0.0), r(0.0), r(1.0), r(1.0)]);
        let err = triangular_solve(
            &zero_diag,
            &up(&[2], ty, &[r(1.0), r(1.0)]),
            opts(TransformA::None),
            ty,
        );
        assert!(matches!(err, Err(Error::InvalidArgument(m)) if m.ends_with(SINGULAR)));
    }
}
