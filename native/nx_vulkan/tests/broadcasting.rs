//! Binary ops over numpy-broadcast operands (rank 0 and empty included) and over
//! operands of different types (converted on load, per Nx's type merge).

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{DType, Error};
use BinaryOp::*;

#[test]
fn mixed_type_operands_are_converted() {
    // s32 + f32 -> f32, u8 + s8 -> s16, u32 - s32 -> s64, s64 + f32 -> f32, s64 / s64 -> f32.
    let mut rng = Rng::new(12);
    let n = 100;
    let i32s: Vec<i32> = (0..n).map(|_| rng.int(-100_000, 100_000) as i32).collect();
    let f32s = rng.f32s(n, -50.0, 50.0);
    let t = binary(
        Add,
        &upload(&[n], DType::S32, &i32s),
        &upload(&[n], DType::F32, &f32s),
        &[n],
        DType::F32,
    );
    let want: Vec<f32> = (0..n).map(|i| i32s[i] as f32 + f32s[i]).collect();
    assert_eq!(download::<f32>(&t.unwrap()), want, "s32 + f32");

    let u8s: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    let s8s: Vec<i8> = (0..n).map(|_| rng.next_u32() as i8).collect();
    let t = binary(
        Add,
        &upload(&[n], DType::U8, &u8s),
        &upload(&[n], DType::S8, &s8s),
        &[n],
        DType::S16,
    );
    let want: Vec<i16> = (0..n).map(|i| u8s[i] as i16 + s8s[i] as i16).collect();
    assert_eq!(download::<i16>(&t.unwrap()), want, "u8 + s8");

    let u32s: Vec<u32> = (0..n).map(|_| rng.next_u32()).collect();
    let t = binary(
        Subtract,
        &upload(&[n], DType::U32, &u32s),
        &upload(&[n], DType::S32, &i32s),
        &[n],
        DType::S64,
    );
    let want: Vec<i64> = (0..n).map(|i| u32s[i] as i64 - i32s[i] as i64).collect();
    assert_eq!(download::<i64>(&t.unwrap()), want, "u32 - s32");

    let i64s: Vec<i64> = (0..n).map(|_| rng.int(-1 << 40, 1 << 40)).collect();
    let t = binary(
        Add,
        &upload(&[n], DType::S64, &i64s),
        &upload(&[n], DType::F32, &f32s),
        &[n],
        DType::F32,
    );
    let want: Vec<f32> = (0..n)
        .map(|i| (i64s[i] as f64 + f32s[i] as f64) as f32)
        .collect();
    assert_close(
        &download::<f32>(&t.unwrap()),
        &want.iter().map(|&x| x as f64).collect::<Vec<_>>(),
        1.2e-7,
        0.0,
        "s64 + f32",
    );

    let small: Vec<i64> = (0..n).map(|i| i as i64 - 50).collect();
    let divisors: Vec<i64> = (0..n).map(|i| (i as i64 % 7) + 1).collect();
    let t = binary(
        Divide,
        &upload(&[n], DType::S64, &small),
        &upload(&[n], DType::S64, &divisors),
        &[n],
        DType::F32,
    );
    let want: Vec<f32> = (0..n)
        .map(|i| small[i] as f32 / divisors[i] as f32)
        .collect();
    assert_eq!(download::<f32>(&t.unwrap()), want, "s64 / s64");
}

/// Checks `op` over numpy-broadcast operands for s32 (exact) and f32 (exact for + - *).
fn check_broadcast(op: BinaryOp, sa: &[usize], sb: &[usize], out: &[usize], rng: &mut Rng) {
    let (na, nb) = (numel(sa), numel(sb));
    let ai: Vec<i32> = (0..na).map(|_| rng.int(-1000, 1000) as i32).collect();
    let bi: Vec<i32> = (0..nb).map(|_| rng.int(-1000, 1000) as i32).collect();
    let t = binary(
        op,
        &upload(sa, DType::S32, &ai),
        &upload(sb, DType::S32, &bi),
        out,
        DType::S32,
    )
    .unwrap();
    assert_eq!(t.shape, out.to_vec());
    let fi = |x: i32, y: i32| match op {
        Add => x.wrapping_add(y),
        Subtract => x.wrapping_sub(y),
        _ => x.wrapping_mul(y),
    };
    let want: Vec<i32> = (0..numel(out))
        .map(|i| {
            let o = unravel(i, out);
            fi(ai[numpy_index(&o, sa)], bi[numpy_index(&o, sb)])
        })
        .collect();
    assert_eq!(
        download::<i32>(&t),
        want,
        "s32 {op:?} {sa:?} {sb:?} -> {out:?}"
    );

    let af = rng.f32s(na, -3.0, 3.0);
    let bf = rng.f32s(nb, -3.0, 3.0);
    let t = binary(
        op,
        &upload(sa, DType::F32, &af),
        &upload(sb, DType::F32, &bf),
        out,
        DType::F32,
    )
    .unwrap();
    let ff = |x: f32, y: f32| match op {
        Add => x + y,
        Subtract => x - y,
        _ => x * y,
    };
    let want: Vec<f32> = (0..numel(out))
        .map(|i| {
            let o = unravel(i, out);
            ff(af[numpy_index(&o, sa)], bf[numpy_index(&o, sb)])
        })
        .collect();
    assert_eq!(
        download::<f32>(&t),
        want,
        "f32 {op:?} {sa:?} {sb:?} -> {out:?}"
    );
}

#[test]
fn broadcasting_rank_0_and_empty() {
    let mut rng = Rng::new(13);
    let cases: &[(&[usize], &[usize], &[usize])] = &[
        (&[2, 3], &[3], &[2, 3]),
        (&[], &[5], &[5]),
        (&[5], &[], &[5]),
        (&[4, 1], &[1, 5], &[4, 5]),
        (&[3, 1, 2], &[4, 1], &[3, 4, 2]),
        (&[1], &[2, 3, 1, 4, 1, 5], &[2, 3, 1, 4, 1, 5]),
        (
            &[2, 1, 2, 1, 2, 1],
            &[1, 2, 1, 2, 1, 2],
            &[2, 2, 2, 2, 2, 2],
        ),
        (&[], &[], &[]),
        (&[1, 1], &[], &[1, 1]),
        (&[0, 3], &[3], &[0, 3]),
        (&[2, 0], &[1], &[2, 0]),
        (&[300, 1], &[1, 257], &[300, 257]),
        // Inner dims that are multiples of 4 take the kernel's vec4 broadcasting path:
        // per-row values, a bias row, a middle broadcast axis, and an odd inner dim.
        (&[6, 8], &[6, 1], &[6, 8]),
        (&[5, 12], &[12], &[5, 12]),
        (&[3, 4, 8], &[3, 1, 8], &[3, 4, 8]),
        (&[2, 3, 1], &[2, 3, 4], &[2, 3, 4]),
        (&[4, 6], &[1, 6], &[4, 6]),
    ];
    for &(sa, sb, out) in cases {
        for op in [Add, Subtract, Multiply] {
            check_broadcast(op, sa, sb, out, &mut rng);
        }
    }
    let a = upload(&[3], DType::S32, &[1i32, 2, 3]);
    let b = upload(&[4], DType::S32, &[1i32, 2, 3, 4]);
    assert!(matches!(
        binary(Add, &a, &b, &[4], DType::S32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        binary(Add, &a, &b, &[3], DType::S32),
        Err(Error::InvalidArgument(_))
    ));
}
