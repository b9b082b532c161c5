//! Creation ops: constant, iota, eye.

mod common;

use common::*;
use nx_vulkan::dtype::ALL_DTYPES;
use nx_vulkan::ops::creation::{constant, eye, f32_to_f8_bits, f32_to_f8e4m3_bits, iota, Scalar};
use nx_vulkan::{DType, Error};

/// Expected little-endian bytes of one element, computed on the host independently of
/// the engine's own `scalar_bytes`.
fn expected_elem(v: Scalar, dtype: DType) -> Vec<u8> {
    let int = |v: Scalar| -> i128 {
        match v {
            Scalar::Int(i) => i,
            Scalar::Float(f) | Scalar::Complex(f, _) if f.is_nan() => 0,
            Scalar::Float(f) | Scalar::Complex(f, _) => f.trunc() as i128,
        }
    };
    let float = |v: Scalar| -> f64 {
        match v {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    };
    let imag = match v {
        Scalar::Complex(_, im) => im,
        _ => 0.0,
    };
    match dtype {
        DType::U8 => vec![int(v) as u8],
        DType::S8 => vec![int(v) as i8 as u8],
        DType::U16 => (int(v) as u16).to_le_bytes().to_vec(),
        DType::S16 => (int(v) as i16).to_le_bytes().to_vec(),
        DType::U32 => (int(v) as u32).to_le_bytes().to_vec(),
        DType::S32 => (int(v) as i32).to_le_bytes().to_vec(),
        DType::U64 => (int(v) as u64).to_le_bytes().to_vec(),
        DType::S64 => (int(v) as i64).to_le_bytes().to_vec(),
        DType::F16 => f16_bits_ref(float(v) as f32).to_le_bytes().to_vec(),
        DType::BF16 => bf16_bits_ref(float(v) as f32).to_le_bytes().to_vec(),
        DType::F32 => (float(v) as f32).to_le_bytes().to_vec(),
        DType::F64 => float(v).to_le_bytes().to_vec(),
        DType::C64 => [(float(v) as f32).to_le_bytes(), (imag as f32).to_le_bytes()].concat(),
        DType::C128 => [float(v).to_le_bytes(), imag.to_le_bytes()].concat(),
        // The bit helpers are checked against Nx's constants in their own tests.
        DType::F8 => vec![f32_to_f8_bits(float(v) as f32)],
        DType::F8E4M3FN => vec![f32_to_f8e4m3_bits(float(v) as f32)],
        // One byte per element: the low bits, sign-extended for the signed types.
        DType::U2 => vec![(int(v) & 3) as u8],
        DType::U4 => vec![(int(v) & 15) as u8],
        DType::S2 => vec![((int(v) as i8) << 6 >> 6) as u8],
        DType::S4 => vec![((int(v) as i8) << 4 >> 4) as u8],
    }
}

/// Values worth storing in each type: extremes, wrap-arounds, rounding cases.
fn edge_values(dtype: DType) -> Vec<Scalar> {
    use Scalar::*;
    match dtype {
        DType::U8 => vec![Int(0), Int(1), Int(255), Int(256), Int(-1), Float(200.9)],
        DType::U2 => vec![Int(3), Int(4), Int(-1), Float(2.9)],
        DType::U4 => vec![Int(15), Int(16), Int(-1), Float(9.5)],
        DType::S2 => vec![Int(1), Int(2), Int(-3), Int(-2)],
        DType::S4 => vec![Int(7), Int(8), Int(-9), Float(-3.7)],
        DType::S8 => vec![Int(-128), Int(127), Int(128), Int(-129), Float(-3.7)],
        DType::U16 => vec![Int(65535), Int(65536), Int(-2), Int(12345)],
        DType::S16 => vec![Int(-32768), Int(32767), Int(40000), Int(-7)],
        DType::U32 => vec![Int(u32::MAX as i128), Int(1 << 32), Int(-1), Float(3.0e9)],
        DType::S32 => vec![
            Int(i32::MIN as i128),
            Int(i32::MAX as i128),
            Float(-2.9),
            Float(f64::NAN),
        ],
        DType::U64 => vec![
            Int(u64::MAX as i128),
            Int(1 << 63),
            Int(0),
            Int(-1),
            Int((1 << 64) + 5),
        ],
        DType::S64 => vec![
            Int(i64::MIN as i128),
            Int(i64::MAX as i128),
            Int(-1),
            Int(1 << 40),
        ],
        DType::F16 => vec![
            Float(1.0),
            Float(-2.0),
            Float(65504.0),
            Float(65519.0),
            Float(65520.0),
            Float(f64::INFINITY),
            Float(f64::NEG_INFINITY),
            Float(-0.0),
            Float(5.960464477539063e-8),
            Float(2.0e-8),
            Float(6.097555160522461e-5),
            Float(0.1),
            Float(1.0 + 1.0 / 2048.0),
            Float(1.0 + 3.0 / 2048.0),
            Int(2049),
        ],
        DType::BF16 => vec![
            Float(1.0),
            Float(1.0 + 1.0 / 256.0),
            Float(1.0 + 3.0 / 256.0),
            Float(3.3895313892515355e38),
            Float(f64::NEG_INFINITY),
            Float(-0.0),
            Float(1.0e-40),
            Int(257),
            Float(0.1),
        ],
        DType::F32 => vec![
            Float(f32::MIN_POSITIVE as f64),
            Float(f32::MAX as f64),
            Float(-1.0e-45),
            Float(0.1),
            Float(f64::INFINITY),
            Int(16_777_217),
            Float(-0.0),
        ],
        DType::F64 => vec![
            Float(f64::MAX),
            Float(f64::MIN_POSITIVE),
            Float(0.1),
            Float(-0.0),
            Int(i64::MAX as i128),
        ],
        DType::C64 | DType::C128 => vec![
            Complex(1.5, -2.0),
            Complex(f64::NAN, f64::INFINITY),
            Complex(0.1, -0.0),
            Float(3.0),
            Int(-7),
        ],
        DType::F8 | DType::F8E4M3FN => vec![
            Float(1.0),
            Float(-2.5),
            Float(448.0),
            Float(1.0e6),
            Float(f64::INFINITY),
            Float(-0.0),
            Float(0.001),
            Int(3),
        ],
    }
}

#[test]
fn constant_every_dtype_and_edge_value() {
    // Small shapes are filled by the host, large ones by the broadcast kernel: cover both.
    let shapes: [&[usize]; 5] = [&[], &[7], &[2, 3], &[0], &[200, 201]];
    for dtype in ALL_DTYPES {
        for v in edge_values(dtype) {
            let one = expected_elem(v, dtype);
            for shape in shapes {
                let t = constant(shape, dtype, v).unwrap();
                assert_eq!(t.shape, shape.to_vec());
                assert_eq!(t.dtype, dtype);
                let got = t.to_bytes().unwrap();
                assert_eq!(
                    got.len(),
                    numel(shape) * dtype.size(),
                    "{dtype:?} {shape:?}"
                );
                for (i, e) in got.chunks(dtype.size()).enumerate() {
                    assert_eq!(e, &one[..], "{dtype:?} {v:?} shape {shape:?} element {i}");
                }
            }
        }
    }
}

#[test]
fn constant_nan_is_nan_in_every_float_type() {
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        for shape in [&[3usize][..], &[100, 1000]] {
            let b = constant(shape, dtype, Scalar::Float(f64::NAN))
                .unwrap()
                .to_bytes()
                .unwrap();
            let all_nan = match dtype {
                DType::F16 => values::<u16>(&b).iter().all(|&h| f16_to_f64(h).is_nan()),
                DType::BF16 => values::<u16>(&b).iter().all(|&h| bf16_to_f64(h).is_nan()),
                DType::F32 => values::<f32>(&b).iter().all(|x| x.is_nan()),
                _ => values::<f64>(&b).iter().all(|x| x.is_nan()),
            };
            assert!(all_nan, "{dtype:?} {shape:?}");
        }
    }
}

#[test]
fn constant_one_million() {
    let t = constant(&[1_000_000], DType::F32, Scalar::Float(3.25)).unwrap();
    let v: Vec<f32> = download(&t);
    assert_eq!(v.len(), 1_000_000);
    assert!(v.iter().all(|&x| x == 3.25));
    let t = constant(&[1000, 1000], DType::S64, Scalar::Int(-5_000_000_000)).unwrap();
    let v: Vec<i64> = download(&t);
    assert!(v.iter().all(|&x| x == -5_000_000_000));
    let t = constant(&[1 << 20], DType::U8, Scalar::Int(0xA5)).unwrap();
    assert!(t.to_bytes().unwrap().iter().all(|&x| x == 0xA5));
}

const IOTA_SHAPES: [&[usize]; 8] = [
    &[],
    &[1],
    &[6],
    &[3, 4],
    &[2, 3, 4],
    &[2, 1, 3, 5],
    &[2, 0, 3],
    &[5, 300],
];

/// Reference iota: flat position, or coordinate along `axis`.
fn iota_ref(shape: &[usize], axis: Option<usize>) -> Vec<u64> {
    (0..numel(shape))
        .map(|i| match axis {
            None => i as u64,
            Some(a) => unravel(i, shape)[a] as u64,
        })
        .collect()
}

#[test]
fn iota_every_axis_of_ranks_0_to_4() {
    for shape in IOTA_SHAPES {
        let mut axes: Vec<Option<usize>> = vec![None];
        axes.extend((0..shape.len()).map(Some));
        for axis in axes {
            let want = iota_ref(shape, axis);
            let t = iota(shape, DType::S32, axis).unwrap();
            assert_eq!(t.shape, shape.to_vec());
            let got: Vec<i32> = download(&t);
            assert_eq!(
                got,
                want.iter().map(|&x| x as i32).collect::<Vec<_>>(),
                "s32 {shape:?} {axis:?}"
            );
            let got: Vec<f32> = download(&iota(shape, DType::F32, axis).unwrap());
            assert_eq!(
                got,
                want.iter().map(|&x| x as f32).collect::<Vec<_>>(),
                "f32 {shape:?} {axis:?}"
            );
            let got: Vec<i64> = download(&iota(shape, DType::S64, axis).unwrap());
            assert_eq!(
                got,
                want.iter().map(|&x| x as i64).collect::<Vec<_>>(),
                "s64 {shape:?} {axis:?}"
            );
            let got: Vec<f64> = download(&iota(shape, DType::F64, axis).unwrap());
            assert_eq!(
                got,
                want.iter().map(|&x| x as f64).collect::<Vec<_>>(),
                "f64 {shape:?} {axis:?}"
            );
            // Narrow types wrap (u8) or round (f16) like a host conversion would.
            let got: Vec<u8> = download(&iota(shape, DType::U8, axis).unwrap());
            assert_eq!(
                got,
                want.iter().map(|&x| x as u8).collect::<Vec<_>>(),
                "u8 {shape:?} {axis:?}"
            );
            let got: Vec<u16> = download(&iota(shape, DType::F16, axis).unwrap());
            let f16: Vec<u16> = want.iter().map(|&x| f16_bits_ref(x as f32)).collect();
            assert_eq!(got, f16, "f16 {shape:?} {axis:?}");
        }
    }
}

#[test]
fn iota_large_and_rounding() {
    // Above 2^24 an f32 iota holds the nearest float of each index (ties to even).
    let n = (1 << 24) + 7;
    let got: Vec<f32> = download(&iota(&[n], DType::F32, None).unwrap());
    assert_eq!(got.len(), n);
    for (i, &x) in got.iter().enumerate() {
        assert_eq!(x, i as f32, "index {i}");
    }
    assert_eq!(got[(1 << 24) + 3], 16_777_220.0);
    let got: Vec<u16> = download(&iota(&[4, 3000], DType::BF16, Some(1)).unwrap());
    for (i, &h) in got.iter().enumerate() {
        assert_eq!(h, bf16_bits_ref((i % 3000) as f32), "bf16 element {i}");
    }
}

#[test]
fn iota_bad_axis_is_an_error() {
    assert!(matches!(
        iota(&[], DType::S32, Some(0)),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        iota(&[2, 3], DType::S32, Some(2)),
        Err(Error::InvalidArgument(_))
    ));
}

fn eye_ref(shape: &[usize]) -> Vec<u8> {
    let r = shape.len();
    (0..numel(shape))
        .map(|i| {
            let idx = unravel(i, shape);
            (idx[r - 2] == idx[r - 1]) as u8
        })
        .collect()
}

#[test]
fn eye_square_non_square_and_batched() {
    let shapes: [&[usize]; 9] = [
        &[1, 1],
        &[3, 3],
        &[3, 5],
        &[5, 3],
        &[2, 3, 4],
        &[2, 2, 4, 3],
        &[0, 3],
        &[3, 0],
        &[70, 300],
    ];
    for shape in shapes {
        let want = eye_ref(shape);
        let got: Vec<u8> = download(&eye(shape, DType::U8).unwrap());
        assert_eq!(got, want, "u8 {shape:?}");
        let got: Vec<f32> = download(&eye(shape, DType::F32).unwrap());
        assert_eq!(
            got,
            want.iter().map(|&x| x as f32).collect::<Vec<_>>(),
            "f32 {shape:?}"
        );
        let got: Vec<i32> = download(&eye(shape, DType::S32).unwrap());
        assert_eq!(
            got,
            want.iter().map(|&x| x as i32).collect::<Vec<_>>(),
            "s32 {shape:?}"
        );
        let got: Vec<u64> = download(&eye(shape, DType::U64).unwrap());
        assert_eq!(
            got,
            want.iter().map(|&x| x as u64).collect::<Vec<_>>(),
            "u64 {shape:?}"
        );
        let got: Vec<u16> = download(&eye(shape, DType::BF16).unwrap());
        assert_eq!(
            got,
            want.iter().map(|&x| x as u16 * 0x3f80).collect::<Vec<_>>(),
            "bf16 {shape:?}"
        );
        let got: Vec<f64> = download(&eye(shape, DType::F64).unwrap());
        assert_eq!(
            got,
            want.iter().map(|&x| x as f64).collect::<Vec<_>>(),
            "f64 {shape:?}"
        );
    }
}

#[test]
fn eye_needs_two_axes() {
    assert!(matches!(
        eye(&[3], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        eye(&[], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
}
