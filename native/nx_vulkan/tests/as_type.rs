//! as_type: every conversion is bit-exact against the host's: floats to integers
//! truncate toward zero, integers wrap, float narrowing rounds to nearest even.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::as_type;
use nx_vulkan::{DType, Tensor};
use std::sync::Arc;

fn convert<T: Elem, U: Elem>(v: &[T], from: DType, to: DType) -> Vec<U> {
    let t = upload(&[v.len()], from, v);
    let r = as_type(&t, to).unwrap_or_else(|e| panic!("{from:?} -> {to:?}: {e}"));
    assert_eq!((r.dtype, r.shape.clone()), (to, vec![v.len()]));
    download(&r)
}

/// Random f32 values of every magnitude (random exponent), both signs.
fn f32_any_magnitude(n: usize, rng: &mut Rng, max_exp: i32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            let e = rng.int(-149, max_exp as i64) as i32;
            let m = 1.0 + rng.unit();
            let v = (m * 2f64.powi(e)) as f32;
            if rng.next_u32().is_multiple_of(2) {
                -v
            } else {
                v
            }
        })
        .collect()
}

#[test]
fn f32_to_s32_truncates() {
    let mut rng = Rng::new(30);
    let mut v = vec![
        -2.7f32,
        -0.5,
        0.5,
        2.7,
        -0.0,
        0.99999994,
        -1.0000001,
        2147483520.0,
        -2147483648.0,
    ];
    v.extend(rng.f32s(1000, -2.1e9, 2.1e9));
    v.extend(rng.f32s(1000, -100.0, 100.0));
    let got: Vec<i32> = convert(&v, DType::F32, DType::S32);
    assert_eq!(got, v.iter().map(|&x| x.trunc() as i32).collect::<Vec<_>>());
    // NaN has no integer value; the kernels store 0.
    assert_eq!(
        convert::<f32, i32>(&[f32::NAN], DType::F32, DType::S32),
        vec![0]
    );
    let got: Vec<i64> = convert(&v, DType::F32, DType::S64);
    assert_eq!(
        got,
        v.iter().map(|&x| x.trunc() as i64).collect::<Vec<_>>(),
        "f32 -> s64"
    );
    let small: Vec<f32> = (0..2560).map(|i| i as f32 / 10.0).collect();
    let got: Vec<u8> = convert(&small, DType::F32, DType::U8);
    assert_eq!(
        got,
        small.iter().map(|&x| x as u8).collect::<Vec<_>>(),
        "f32 -> u8"
    );
}

#[test]
fn integers_to_floats_round_to_nearest_even() {
    let mut rng = Rng::new(31);
    let mut v: Vec<i32> = vec![
        i32::MIN,
        i32::MAX,
        16_777_217,
        16_777_219,
        -16_777_217,
        0,
        -1,
    ];
    v.extend((0..2000).map(|_| rng.next_u32() as i32));
    let got: Vec<f32> = convert(&v, DType::S32, DType::F32);
    assert_eq!(
        got,
        v.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        "s32 -> f32"
    );
    let u: Vec<u8> = (0..=255).collect();
    let got: Vec<f32> = convert(&u, DType::U8, DType::F32);
    assert_eq!(
        got,
        u.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        "u8 -> f32"
    );
    let mut w: Vec<u64> = vec![u64::MAX, 1 << 63, (1 << 53) + 1, (1 << 24) + 1, 0];
    w.extend((0..2000).map(|i| rng.next_u64() >> (i % 64)));
    let got: Vec<f32> = convert(&w, DType::U64, DType::F32);
    assert_eq!(
        got,
        w.iter().map(|&x| x as f32).collect::<Vec<_>>(),
        "u64 -> f32"
    );
    let s: Vec<i64> = w.iter().map(|&x| x as i64).collect();
    let got: Vec<f64> = convert(&s, DType::S64, DType::F64);
    assert_eq!(
        got,
        s.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        "s64 -> f64"
    );
    let got: Vec<u16> = convert(&(-128i8..=127).collect::<Vec<_>>(), DType::S8, DType::F16);
    let want: Vec<u16> = (-128i8..=127).map(|x| f16_bits_ref(x as f32)).collect();
    assert_eq!(got, want, "s8 -> f16");
}

#[test]
fn float_infinities_saturate_to_the_integer_type() {
    // Nx.Type.max_finite_binary / min_finite_binary of the output type; NaN is 0.
    let v = [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -7.9];
    let got: Vec<i8> = convert(&v, DType::F32, DType::S8);
    assert_eq!(got, vec![127, -128, 0, -7], "f32 -> s8");
    let got: Vec<u8> = convert(&v, DType::F32, DType::U8);
    assert_eq!(got, vec![255, 0, 0, 249], "f32 -> u8");
    let got: Vec<i16> = convert(&v, DType::F32, DType::S16);
    assert_eq!(got, vec![32767, -32768, 0, -7], "f32 -> s16");
    let got: Vec<u16> = convert(&v, DType::F32, DType::U16);
    assert_eq!(got, vec![65535, 0, 0, 65529], "f32 -> u16");
    let got: Vec<i32> = convert(&v, DType::F32, DType::S32);
    assert_eq!(got, vec![i32::MAX, i32::MIN, 0, -7], "f32 -> s32");
    // Finite values wrap as Nx writes them (<<trunc(x)::16>>), also above 2^31.
    let big = [3.0e9f32, 2.5e9];
    let got: Vec<u16> = convert(&big, DType::F32, DType::U16);
    assert_eq!(got, vec![24064, 63744], "f32 -> u16, large");
    let got: Vec<u32> = convert(&big, DType::F32, DType::U32);
    assert_eq!(got, vec![3_000_000_000, 2_500_000_000], "f32 -> u32, large");
    let w = [f64::INFINITY, f64::NEG_INFINITY, -7.9];
    let got: Vec<i8> = convert(&w, DType::F64, DType::S8);
    assert_eq!(got, vec![127, -128, -7], "f64 -> s8");
}

#[test]
fn f32_to_f16_rounds_to_nearest_even_and_bf16_as_nx() {
    let mut rng = Rng::new(32);
    let mut v: Vec<f32> = vec![
        1.0 + 2f32.powi(-11),       // tie: to even (1.0)
        1.0 + 3.0 * 2f32.powi(-11), // tie: to even (1 + 2^-9)
        65504.0,
        65519.996,
        65520.0,
        1e6,
        -1e6,
        5.960_464_5e-8,
        2.980_232_2e-8,
        2.980_233e-8,
        8.940_697e-8, // f16 subnormal ties
        6.097_555e-5,
        6.103_515_6e-5,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1.0 + 2f32.powi(-8),
        1.0 + 3.0 * 2f32.powi(-8),
        f32::MAX,
        f32::MIN_POSITIVE,
        1e-45,
    ];
    v.extend(f32_any_magnitude(3000, &mut rng, 17));
    v.extend(
        (0..2000)
            .map(|_| f32::from_bits(rng.next_u32()))
            .filter(|x| !x.is_nan()),
    );
    let got: Vec<u16> = convert(&v, DType::F32, DType::F16);
    for (i, &x) in v.iter().enumerate() {
        assert_eq!(
            got[i],
            f16_bits_ref(x),
            "f32 {x:e} ({:#010x}) -> f16",
            x.to_bits()
        );
    }
    let got: Vec<u16> = convert(&v, DType::F32, DType::BF16);
    for (i, &x) in v.iter().enumerate() {
        assert_eq!(
            got[i],
            bf16_bits_ref(x),
            "f32 {x:e} ({:#010x}) -> bf16",
            x.to_bits()
        );
    }
    let nan: Vec<u16> = convert(&[f32::NAN, -f32::NAN], DType::F32, DType::F16);
    assert!(nan.iter().all(|&h| f16_to_f64(h).is_nan()), "{nan:x?}");
    let nan: Vec<u16> = convert(&[f32::NAN, -f32::NAN], DType::F32, DType::BF16);
    assert!(nan.iter().all(|&h| bf16_to_f64(h).is_nan()), "{nan:x?}");
}

#[test]
fn half_types_widen_exactly_for_every_bit_pattern() {
    let all: Vec<u16> = (0..=u16::MAX).collect();
    let got: Vec<f32> = convert(&all, DType::F16, DType::F32);
    for (&h, &g) in all.iter().zip(&got) {
        let w = f16_to_f64(h);
        assert!(
            if w.is_nan() {
                g.is_nan()
            } else {
                g as f64 == w && g.is_sign_negative() == w.is_sign_negative()
            },
            "f16 {h:#06x} -> {g:e}"
        );
    }
    let got: Vec<f32> = convert(&all, DType::BF16, DType::F32);
    for (&h, &g) in all.iter().zip(&got) {
        let w = f32::from_bits((h as u32) << 16);
        assert!(
            if w.is_nan() {
                g.is_nan()
            } else {
                g.to_bits() == w.to_bits()
            },
            "bf16 {h:#06x} -> {g:e}"
        );
    }
    // f16 -> s32 truncates; bf16 -> f16 rounds once (bf16 -> f32 is exact).
    let got: Vec<i32> = convert(&all, DType::F16, DType::S32);
    for (&h, &g) in all.iter().zip(&got) {
        let w = f16_to_f64(h);
        if w.is_finite() {
            assert_eq!(g, w.trunc() as i32, "f16 {h:#06x} -> s32");
        }
    }
    let got: Vec<u16> = convert(&all, DType::BF16, DType::F16);
    for (&h, &g) in all.iter().zip(&got) {
        let x = f32::from_bits((h as u32) << 16);
        if !x.is_nan() {
            assert_eq!(g, f16_bits_ref(x), "bf16 {h:#06x} -> f16");
        }
    }
}

#[test]
fn f64_and_f32_convert_both_ways() {
    let mut rng = Rng::new(33);
    let mut v: Vec<f64> = vec![
        0.1,
        1e300,
        -1e300,
        1e-300,
        3.4028235677973366e38,
        3.4028235e38 * 1.0000001,
        1.401298464324817e-45,
        7e-46,
        1.0 + 2f64.powi(-24),
        -0.0,
    ];
    v.extend(
        (0..3000)
            .map(|_| f64::from_bits(rng.next_u64()))
            .filter(|x| x.is_finite()),
    );
    v.extend((0..3000).map(|_| rng.uniform(-1.0, 1.0) * 2f64.powi(rng.int(-160, 130) as i32)));
    let got: Vec<f32> = convert(&v, DType::F64, DType::F32);
    for (i, &x) in v.iter().enumerate() {
        assert_eq!(got[i].to_bits(), (x as f32).to_bits(), "f64 {x:e} -> f32");
    }
    let f: Vec<f32> = f32_any_magnitude(3000, &mut rng, 127);
    let got: Vec<f64> = convert(&f, DType::F32, DType::F64);
    assert_eq!(
        got,
        f.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        "f32 -> f64"
    );
    let w: Vec<f64> = (0..2000)
        .map(|_| rng.uniform(-9.2e18, 9.2e18) * 2f64.powi(-(rng.int(0, 60) as i32)))
        .collect();
    let got: Vec<i64> = convert(&w, DType::F64, DType::S64);
    assert_eq!(
        got,
        w.iter().map(|&x| x.trunc() as i64).collect::<Vec<_>>(),
        "f64 -> s64"
    );
}

#[test]
fn integer_conversions_wrap() {
    let mut rng = Rng::new(34);
    let mut s: Vec<i64> = vec![
        i64::MIN,
        i64::MAX,
        -1,
        1 << 31,
        (1 << 31) - 1,
        -(1 << 31) - 1,
        255,
        256,
    ];
    s.extend((0..2000).map(|_| rng.next_u64() as i64));
    assert_eq!(
        convert::<i64, i32>(&s, DType::S64, DType::S32),
        s.iter().map(|&x| x as i32).collect::<Vec<_>>(),
        "s64 -> s32"
    );
    assert_eq!(
        convert::<i64, u8>(&s, DType::S64, DType::U8),
        s.iter().map(|&x| x as u8).collect::<Vec<_>>(),
        "s64 -> u8"
    );
    assert_eq!(
        convert::<i64, u32>(&s, DType::S64, DType::U32),
        s.iter().map(|&x| x as u32).collect::<Vec<_>>(),
        "s64 -> u32"
    );
    let i: Vec<i32> = s.iter().map(|&x| x as i32).collect();
    assert_eq!(
        convert::<i32, i64>(&i, DType::S32, DType::S64),
        i.iter().map(|&x| x as i64).collect::<Vec<_>>(),
        "s32 -> s64"
    );
    assert_eq!(
        convert::<i32, i16>(&i, DType::S32, DType::S16),
        i.iter().map(|&x| x as i16).collect::<Vec<_>>(),
        "s32 -> s16"
    );
    let u: Vec<u32> = s.iter().map(|&x| x as u32).collect();
    assert_eq!(
        convert::<u32, i64>(&u, DType::U32, DType::S64),
        u.iter().map(|&x| x as i64).collect::<Vec<_>>(),
        "u32 -> s64"
    );
    assert_eq!(
        convert::<u32, i32>(&u, DType::U32, DType::S32),
        u.iter().map(|&x| x as i32).collect::<Vec<_>>(),
        "u32 -> s32"
    );
    let b: Vec<u8> = (0..=255).collect();
    assert_eq!(
        convert::<u8, i8>(&b, DType::U8, DType::S8),
        b.iter().map(|&x| x as i8).collect::<Vec<_>>(),
        "u8 -> s8"
    );
    let c: Vec<i8> = (-128..=127).collect();
    assert_eq!(
        convert::<i8, u64>(&c, DType::S8, DType::U64),
        c.iter().map(|&x| x as u64).collect::<Vec<_>>(),
        "s8 -> u64"
    );
    assert_eq!(
        convert::<i8, u16>(&c, DType::S8, DType::U16),
        c.iter().map(|&x| x as u16).collect::<Vec<_>>(),
        "s8 -> u16"
    );
}

#[test]
fn same_type_and_empty() {
    let t = upload(&[3], DType::S32, &[1i32, 2, 3]);
    let r = as_type(&t, DType::S32).unwrap();
    assert!(Arc::ptr_eq(&r.block, &t.block));
    let e = Tensor::from_bytes(&[4, 0], DType::F32, &[]).unwrap();
    let r = as_type(&e, DType::F16).unwrap();
    assert_eq!((r.shape.clone(), r.dtype), (vec![4, 0], DType::F16));
    assert!(r.to_bytes().unwrap().is_empty());
    let s = upload(&[], DType::F64, &[-7.9f64]);
    assert_eq!(download::<i8>(&as_type(&s, DType::S8).unwrap()), vec![-7]);
}

/// f64 -> f16 rounds once, as Nx does (bf16 takes the nearest f32's top half, as Nx): values just above or below a tie of the
/// narrow type (by far less than an f32 ulp) go to the nearer neighbour, where rounding to
/// the nearest f32 first would make them the tie and round it to even.
#[test]
fn f64_to_f16_rounds_once_and_bf16_as_nx() {
    let tiny = 2f64.powi(-40);
    let mut v = Vec::new();
    for base in [1.0, -1.5, 1024.0, 3.0e-5, 6.0e-8] {
        // Ties between f16 neighbours: x + ulp/2 for x on the f16 grid near `base`.
        let x = f16_to_f64(f16_bits_from_f64(base));
        let ulp = f16_to_f64(f16_bits_from_f64(x.abs()) + 1) - x.abs();
        let tie = x + x.signum() * ulp / 2.0;
        v.extend([tie + tie.abs() * tiny, tie - tie.abs() * tiny, tie]);
        let xb = bf16_to_f64(bf16_bits_from_f64(base));
        let ulpb = bf16_to_f64(bf16_bits_from_f64(xb.abs()) + 1) - xb.abs();
        let tieb = xb + xb.signum() * ulpb / 2.0;
        v.extend([tieb + tieb.abs() * tiny, tieb - tieb.abs() * tiny, tieb]);
    }
    v.extend([f64::INFINITY, -0.0, 1e300, -1e-300, 65519.9, 65520.0]);
    let got: Vec<u16> = convert(&v, DType::F64, DType::F16);
    for (&x, &g) in v.iter().zip(&got) {
        assert_eq!(g, f16_bits_from_f64(x), "f64 {x:e} -> f16");
    }
    let got: Vec<u16> = convert(&v, DType::F64, DType::BF16);
    for (&x, &g) in v.iter().zip(&got) {
        assert_eq!(g, bf16_bits_from_f64(x), "f64 {x:e} -> bf16");
    }
    // The traps are real: rounding to the nearest f32 first gives other bits for some.
    assert!(v
        .iter()
        .any(|&x| f16_bits_from_f64(x) != f16_bits_ref(x as f32)));
    // bf16 goes through the nearest f32 and keeps its top half, as Nx.BinaryBackend does.
    assert!(v
        .iter()
        .all(|&x| bf16_bits_from_f64(x) == bf16_bits_ref(x as f32)));
}
