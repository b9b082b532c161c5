//! fft/ifft and triangular_solve of complex numbers (c64, c128) against references
//! computed here in f64: the direct DFT, and substitution with the `complex` library's
//! formulas.

mod common;

use common::complex::*;
use common::*;
use nx_vulkan::ops::complex::fft;
use nx_vulkan::ops::triangular::{triangular_solve, TransformA, TriangularSolveOpts, SINGULAR};
use nx_vulkan::{DType, Error};

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
