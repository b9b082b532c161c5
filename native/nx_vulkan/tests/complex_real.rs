//! erf, erfc, erf_inv and atan2 of complex tensors, which Nx defines only where every
//! imaginary part is zero (`Complex.erf` and friends raise `ArithmeticError` otherwise):
//! the real-part results of the engine's real ops, with zero imaginary parts, and
//! `Error::Arithmetic` with Nx's message for any other imaginary part (NaN included).

mod common;

use common::complex::*;
use common::*;
use nx_vulkan::ops::creation::{constant, Scalar};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::{DType, Error};

const XS: [f64; 7] = [-3.5, -0.75, -0.0, 0.0, 0.3, 1.25, 4.5];

fn real_of(ty: DType) -> DType {
    if ty == DType::C64 {
        DType::F32
    } else {
        DType::F64
    }
}

/// XS as a tensor of the real type `r`.
fn xs_tensor(r: DType) -> nx_vulkan::Tensor {
    match r {
        DType::F32 => upload(&[XS.len()], r, &XS.map(|x| x as f32)),
        _ => upload(&[XS.len()], r, &XS),
    }
}

/// The real values of a real tensor, as f64.
fn reals(t: &nx_vulkan::Tensor) -> Vec<f64> {
    match t.dtype {
        DType::F32 => download::<f32>(t).iter().map(|&x| x as f64).collect(),
        _ => download::<f64>(t),
    }
}

fn assert_same_bits(got: &[C], want: &[f64], ty: DType, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let same = if ty == DType::C64 {
            (g.0 as f32).to_bits() == (*w as f32).to_bits()
        } else {
            g.0.to_bits() == w.to_bits()
        };
        assert!(
            same || (g.0.is_nan() && w.is_nan()),
            "{what}[{i}]: got {g:?}, want {w}"
        );
        assert_eq!(g.1.to_bits(), 0, "{what}[{i}]: imaginary part {}", g.1);
    }
}

#[test]
fn erf_family_of_complex_numbers_with_zero_imaginary_parts() {
    for ty in [DType::C64, DType::C128] {
        let r = real_of(ty);
        let z: Vec<C> = XS.iter().map(|&x| (x, 0.0)).collect();
        let zt = up(&[XS.len()], ty, &z);
        let xt = xs_tensor(r);
        for op in [UnaryOp::Erf, UnaryOp::ErfInv] {
            let got = down(&unary(op, &zt, ty).unwrap());
            let want = reals(&unary(op, &xt, r).unwrap());
            assert_same_bits(&got, &want, ty, &format!("{op:?} of {}", ty.name()));
        }
        // erfc: 1 - erf(x) in double, rounded once (the `complex` library subtracts).
        let exact = |x: f64| if ty == DType::C64 { x as f32 as f64 } else { x };
        let x64 = upload(&[XS.len()], DType::F64, &XS.map(exact));
        let erf64 = unary(UnaryOp::Erf, &x64, DType::F64).unwrap();
        let one = constant(&[], DType::F64, Scalar::Float(1.0)).unwrap();
        let want =
            reals(&binary(BinaryOp::Subtract, &one, &erf64, &[XS.len()], DType::F64).unwrap());
        let got = down(&unary(UnaryOp::Erfc, &zt, ty).unwrap());
        assert_same_bits(&got, &want, ty, &format!("erfc of {}", ty.name()));
        // 1 - erf, not erfc: at 4.5 the two differ past f32's precision.
        if ty == DType::C128 {
            let erfc = reals(&unary(UnaryOp::Erfc, &x64, DType::F64).unwrap());
            assert_ne!(got[6].0, erfc[6], "erfc(4.5) of c128 is 1 - erf, as in Nx");
        }
    }
}

#[test]
fn atan2_of_complex_numbers_with_zero_imaginary_parts() {
    for ty in [DType::C64, DType::C128] {
        let r = real_of(ty);
        let a: Vec<C> = XS.iter().map(|&x| (x, 0.0)).collect();
        let at = up(&[XS.len()], ty, &a);
        // A real operand broadcast against the complex one.
        let b = upload(&[1], DType::F64, &[-2.0f64]);
        let got = down(&binary(BinaryOp::Atan2, &at, &b, &[XS.len()], ty).unwrap());
        let xt = xs_tensor(r);
        let br = constant(&[1], r, Scalar::Float(-2.0)).unwrap();
        let want = reals(&binary(BinaryOp::Atan2, &xt, &br, &[XS.len()], r).unwrap());
        assert_same_bits(&got, &want, ty, &format!("atan2 of {}", ty.name()));
    }
}

#[test]
fn non_zero_imaginary_parts_are_nx_arithmetic_errors() {
    for ty in [DType::C64, DType::C128] {
        for im in [1e-30, -2.0, f64::NAN] {
            let z = up(&[3], ty, &[(0.5, 0.0), (0.25, im), (1.0, 0.0)]);
            for (op, name) in [
                (UnaryOp::Erf, "erf"),
                (UnaryOp::Erfc, "erfc"),
                (UnaryOp::ErfInv, "erf_inv"),
            ] {
                match unary(op, &z, ty) {
                    Err(Error::Arithmetic(m)) => {
                        assert_eq!(m, format!("{name} not implemented for non-real numbers"))
                    }
                    other => panic!("{name} with imaginary part {im}: {:?}", other.err()),
                }
            }
            let real = upload(&[3], DType::F32, &[1.0f32, 2.0, 3.0]);
            for (a, b) in [(&z, &real), (&real, &z)] {
                match binary(BinaryOp::Atan2, a, b, &[3], ty) {
                    Err(Error::Arithmetic(m)) => {
                        assert_eq!(m, "Complex.atan2 only accepts real numbers as arguments")
                    }
                    other => panic!("atan2 with imaginary part {im}: {:?}", other.err()),
                }
            }
        }
    }
}
