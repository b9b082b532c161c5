//! triangular_solve against its definition: pick X, build B = op(A) X (left side) or
//! X op(A) with only A's triangle, solve, and compare with X. The other triangle holds
//! large values the solver must never read. Every option combination, vector and matrix
//! right-hand sides, batches, f32 and f64, the singular-matrix error and bad shapes.

mod common;

use common::*;
use nx_vulkan::ops::triangular::{triangular_solve, TransformA, TriangularSolveOpts, SINGULAR};
use nx_vulkan::{DType, Error};

/// A[i][j] as the solver should see it: the chosen triangle, the rest zero.
fn triangle(a: &[f64], n: usize, lower: bool) -> Vec<f64> {
    let mut t = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..n {
            if (lower && j <= i) || (!lower && j >= i) {
                t[i * n + j] = a[i * n + j];
            }
        }
    }
    t
}

fn matmul(x: &[f64], y: &[f64], r: usize, k: usize, c: usize) -> Vec<f64> {
    let mut out = vec![0.0; r * c];
    for i in 0..r {
        for j in 0..c {
            out[i * c + j] = (0..k).map(|t| x[i * k + t] * y[t * c + j]).sum();
        }
    }
    out
}

fn transposed(x: &[f64], r: usize, c: usize) -> Vec<f64> {
    let mut out = vec![0.0; r * c];
    for i in 0..r {
        for j in 0..c {
            out[j * r + i] = x[i * c + j];
        }
    }
    out
}

/// One case: `batches` systems of order n, B per batch `b_shape` (after the batch axes).
fn check(
    rng: &mut Rng,
    opts: TriangularSolveOpts,
    batch: &[usize],
    n: usize,
    b_tail: &[usize],
    ty: DType,
) {
    let batches: usize = batch.iter().product();
    let (mut a_all, mut x_all, mut b_all) = (vec![], vec![], vec![]);
    for _ in 0..batches {
        // Well conditioned: diagonal 2..4 in magnitude, off-diagonal in [-1, 1) / n.
        let mut a: Vec<f64> = (0..n * n)
            .map(|_| rng.uniform(-1.0, 1.0) / n as f64)
            .collect();
        for i in 0..n {
            a[i * n + i] = rng.uniform(2.0, 4.0) * if rng.unit() < 0.5 { -1.0 } else { 1.0 };
        }
        let t = triangle(&a, n, opts.lower);
        // Garbage in the other triangle.
        for i in 0..n {
            for j in 0..n {
                if t[i * n + j] == 0.0 && i != j {
                    a[i * n + j] = 1.0e6;
                }
            }
        }
        let op_a = if opts.transform_a == TransformA::Transpose {
            transposed(&t, n, n)
        } else {
            t
        };
        let m: usize = b_tail.iter().product::<usize>() / n;
        let x: Vec<f64> = (0..n * m).map(|_| rng.uniform(-2.0, 2.0)).collect();
        // A vector b is a column (A x = b) or a row (x A = b).
        let b = if opts.left_side {
            matmul(&op_a, &x, n, n, m)
        } else {
            matmul(&x, &op_a, m, n, n)
        };
        a_all.extend(a);
        x_all.extend(x);
        b_all.extend(b);
    }
    let a_shape = [batch, &[n, n]].concat();
    let b_shape = [batch, b_tail].concat();
    let what = format!("{opts:?} batch {batch:?} n {n} b {b_tail:?} {}", ty.name());
    let (got, tol): (Vec<f64>, f64) = if ty == DType::F64 {
        let a = upload(&a_shape, ty, &a_all);
        let b = upload(&b_shape, ty, &b_all);
        let r = triangular_solve(&a, &b, opts, ty).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(r.shape, b_shape, "{what}");
        (download::<f64>(&r), 1e-12)
    } else {
        let a32: Vec<f32> = a_all.iter().map(|&v| v as f32).collect();
        let b32: Vec<f32> = b_all.iter().map(|&v| v as f32).collect();
        let a = upload(&a_shape, ty, &a32);
        let b = upload(&b_shape, ty, &b32);
        let r = triangular_solve(&a, &b, opts, ty).unwrap_or_else(|e| panic!("{what}: {e}"));
        (
            download::<f32>(&r).iter().map(|&v| v as f64).collect(),
            1e-4,
        )
    };
    for (i, (g, w)) in got.iter().zip(&x_all).enumerate() {
        assert!(
            (g - w).abs() <= tol * (1.0 + w.abs()),
            "{what}: x[{i}] = {g}, want {w}"
        );
    }
}

#[test]
fn every_option_combination_solves_the_system() {
    let mut rng = Rng::new(7);
    for left_side in [true, false] {
        for lower in [true, false] {
            for transform_a in [
                TransformA::None,
                TransformA::Transpose,
                TransformA::Conjugate,
            ] {
                let opts = TriangularSolveOpts {
                    left_side,
                    lower,
                    transform_a,
                };
                for ty in [DType::F64, DType::F32] {
                    check(&mut rng, opts, &[], 5, &[5], ty);
                    let b_tail = if left_side { [5, 3] } else { [3, 5] };
                    check(&mut rng, opts, &[], 5, &b_tail, ty);
                    check(&mut rng, opts, &[2, 3], 4, &[4], ty);
                    let b_tail = if left_side { [4, 2] } else { [2, 4] };
                    check(&mut rng, opts, &[3], 4, &b_tail, ty);
                }
            }
        }
    }
}

#[test]
fn larger_systems() {
    let mut rng = Rng::new(8);
    let opts = TriangularSolveOpts {
        left_side: true,
        lower: false,
        transform_a: TransformA::None,
    };
    check(&mut rng, opts, &[], 200, &[200, 17], DType::F64);
    check(&mut rng, opts, &[], 64, &[64, 64], DType::F32);
}

#[test]
fn reproduces_nx_doctest_values() {
    // Nx.LinAlg.triangular_solve/3 doctests (s32 inputs, f32 output).
    let opts = TriangularSolveOpts {
        left_side: true,
        lower: true,
        transform_a: TransformA::None,
    };
    let a = upload(&[3, 3], DType::S32, &[1i32, 0, 0, 1, 1, 0, 1, 2, 1]);
    let b = upload(&[3, 2], DType::S32, &[0i32, 2, 3, 0, 0, 0]);
    let r = triangular_solve(&a, &b, opts, DType::F32).unwrap();
    assert_eq!(download::<f32>(&r), [0.0, 2.0, 3.0, -2.0, -6.0, 2.0]);
    let b = upload(&[2, 3], DType::S32, &[0i32, 1, 3, 2, 1, 3]);
    let left = TriangularSolveOpts {
        left_side: false,
        ..opts
    };
    let r = triangular_solve(&a, &b, left, DType::F32).unwrap();
    assert_eq!(download::<f32>(&r), [2.0, -5.0, 3.0, 4.0, -5.0, 3.0]);
    // Batched A with one vector per batch.
    let a = upload(&[2, 2, 2], DType::S32, &[1i32, 0, 2, 3, 4, 0, 5, 6]);
    let b = upload(&[2, 2], DType::S32, &[2i32, -1, 3, 7]);
    let r = triangular_solve(&a, &b, opts, DType::F32).unwrap();
    assert_eq!(download::<f32>(&r), [2.0, -1.6666666, 0.75, 0.5416667]);
}

#[test]
fn singular_matrices_and_bad_shapes_are_errors() {
    let opts = TriangularSolveOpts {
        left_side: true,
        lower: true,
        transform_a: TransformA::None,
    };
    let a = upload(
        &[4, 4],
        DType::S32,
        &[0i32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1],
    );
    let b = upload(&[4], DType::S32, &[4i32, 2, 4, 2]);
    assert_eq!(
        triangular_solve(&a, &b, opts, DType::F32).err(),
        Some(Error::InvalidArgument(SINGULAR.to_string()))
    );
    let not_square = upload(&[2, 4], DType::F32, &[0.0f32; 8]);
    let b4 = upload(&[4], DType::F32, &[1.0f32; 4]);
    assert!(matches!(
        triangular_solve(&not_square, &b4, opts, DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    let square = upload(&[4, 4], DType::F32, &[1.0f32; 16]);
    let b1 = upload(&[1], DType::F32, &[1.0f32]);
    assert!(matches!(
        triangular_solve(&square, &b1, opts, DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        triangular_solve(&square, &b4, opts, DType::S32),
        Err(Error::InvalidArgument(_))
    ));
}
