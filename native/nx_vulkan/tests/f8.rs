//! The 8-bit float types: every bit pattern decodes as Nx.Floating's loaders do, stores
//! from the kernels match Nx.Floating's dumps (`creation::f32_to_f8*_bits`, checked
//! against Nx's constants in their unit test), and arithmetic computes through f32.

mod common;

use common::*;
use nx_vulkan::ops::creation::{constant, f32_to_f8_bits, f32_to_f8e4m3_bits, Scalar};
use nx_vulkan::ops::elementwise::{as_type, binary, BinaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::DType;

/// Nx.Floating.load_f8 / load_f8_e4m3fn.
fn decode(ty: DType, b: u8) -> f32 {
    match ty {
        DType::F8 => f16_to_f64((b as u16) << 8) as f32,
        _ => {
            let (e, m) = ((b >> 3) & 15, (b & 7) as f32);
            let v = match (e, m) {
                (15, 7.0) => f32::NAN,
                (0, _) => m / 8.0 * 2f32.powi(-6),
                _ => (1.0 + m / 8.0) * 2f32.powi(e as i32 - 7),
            };
            if b & 0x80 != 0 {
                -v
            } else {
                v
            }
        }
    }
}

fn encode(ty: DType, x: f32) -> u8 {
    match ty {
        DType::F8 => f32_to_f8_bits(x),
        _ => f32_to_f8e4m3_bits(x),
    }
}

#[test]
fn every_bit_pattern_decodes() {
    for ty in [DType::F8, DType::F8E4M3FN] {
        let all: Vec<u8> = (0..=255).collect();
        let t = upload(&[256], ty, &all);
        let got = download::<f32>(&as_type(&t, DType::F32).unwrap());
        for (b, g) in all.iter().zip(&got) {
            let want = decode(ty, *b);
            assert!(
                (g.is_nan() && want.is_nan()) || g.to_bits() == want.to_bits(),
                "{ty:?} 0x{b:02x}: got {g}, want {want}"
            );
        }
    }
}

#[test]
fn stores_match_nx_dumps() {
    let mut xs: Vec<f32> = vec![0.0, -0.0, 1.0, -2.5, 1.2, 1.99, 448.0, 500.0, -1e6, 57344.0];
    xs.extend([
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        2f32.powi(-9),
        3.0 * 2f32.powi(-10),
    ]);
    let mut rng = Rng::new(11);
    xs.extend(
        (0..500)
            .map(|_| (rng.uniform(-1.0, 1.0) * 2f64.powi(rng.uniform(-12.0, 12.0) as i32)) as f32),
    );
    let t = upload(&[xs.len()], DType::F32, &xs);
    for ty in [DType::F8, DType::F8E4M3FN] {
        let got = download::<u8>(&as_type(&t, ty).unwrap());
        for (x, g) in xs.iter().zip(&got) {
            assert_eq!(*g, encode(ty, *x), "{ty:?} of {x}: got 0x{g:02x}");
        }
        // Scalars made on the host agree with the kernels.
        let c = constant(&[3], ty, Scalar::Float(-2.5)).unwrap();
        assert_eq!(download::<u8>(&c), vec![encode(ty, -2.5); 3]);
    }
}

#[test]
fn arithmetic_and_reductions_compute_through_f32() {
    for ty in [DType::F8, DType::F8E4M3FN] {
        let a: Vec<u8> = [1.0f32, 2.0, -3.0, 0.5]
            .iter()
            .map(|&x| encode(ty, x))
            .collect();
        let b: Vec<u8> = [0.5f32, 2.0, 1.0, -0.25]
            .iter()
            .map(|&x| encode(ty, x))
            .collect();
        let (ta, tb) = (upload(&[4], ty, &a), upload(&[4], ty, &b));
        let sum = download::<u8>(&binary(BinaryOp::Add, &ta, &tb, &[4], ty).unwrap());
        let want: Vec<u8> = [1.5f32, 4.0, -2.0, 0.25]
            .iter()
            .map(|&x| encode(ty, x))
            .collect();
        assert_eq!(sum, want, "{ty:?} add");
        let mx = reduce(ReduceOp::Max, &ta, None, false, ty).unwrap();
        assert_eq!(download::<u8>(&mx), vec![encode(ty, 2.0)], "{ty:?} max");
        let total = reduce(ReduceOp::Sum, &ta, None, false, DType::F32).unwrap();
        assert_eq!(download::<f32>(&total), vec![0.5], "{ty:?} sum");
    }
}
