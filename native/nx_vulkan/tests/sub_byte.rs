//! The sub-byte integer types u2, u4, s2, s4: Nx's packed binaries round-trip, and every
//! kernel's result wraps to the type's bits as Nx.BinaryBackend's bitstrings do
//! (`<<v::4>>` keeps the low 4 bits), with reads of the signed types sign-extended.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{as_type, binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::ops::shape::bitcast;
use nx_vulkan::ops::sort::sort;
use nx_vulkan::{DType, Tensor};

/// Values of a sub-byte type as i8 (the device's storage), from its packed binary.
fn ints(t: &Tensor) -> Vec<i8> {
    download::<i8>(t)
}

/// A sub-byte tensor from small integers (wrapped by the upload).
fn sub(dtype: DType, v: &[i8]) -> Tensor {
    upload(&[v.len()], dtype, v)
}

/// Nx's wrap of an integer to `bits` bits, signed or not (the reference).
fn wrap(v: i64, bits: u32, signed: bool) -> i8 {
    let low = v & ((1 << bits) - 1);
    if signed && low >= 1 << (bits - 1) {
        (low - (1 << bits)) as i8
    } else {
        low as i8
    }
}

#[test]
fn packed_binaries_round_trip() {
    // Nx.bit_size/1's doctest tensor: u2 [[1, 2, 3], [3, 2, 1]] is <<0x6F, 0x90>>.
    let t = Tensor::from_binary(&[2, 3], DType::U2, &[0x6F, 0x90]).unwrap();
    assert_eq!(ints(&t), vec![1, 2, 3, 3, 2, 1]);
    assert_eq!(t.to_binary(None).unwrap(), vec![0x6F, 0x90]);
    // The first 1 byte: 4 elements.
    assert_eq!(t.to_binary(Some(1)).unwrap(), vec![0x6F]);
    let s = Tensor::from_binary(&[3], DType::S4, &[0xF7, 0x80]).unwrap();
    assert_eq!(ints(&s), vec![-1, 7, -8]);
    assert_eq!(s.to_binary(None).unwrap(), vec![0xF7, 0x80]);
    // A wrong length is an error, not a short read.
    assert!(Tensor::from_binary(&[3], DType::U4, &[0xF7]).is_err());
}

#[test]
fn arithmetic_wraps_to_the_type() {
    let cases: [(DType, u32, bool); 4] = [
        (DType::U2, 2, false),
        (DType::U4, 4, false),
        (DType::S2, 2, true),
        (DType::S4, 4, true),
    ];
    for (d, bits, signed) in cases {
        let all: Vec<i64> = if signed {
            (-(1 << (bits - 1))..(1 << (bits - 1))).collect()
        } else {
            (0..(1 << bits)).collect()
        };
        // Every pair of values.
        let a: Vec<i8> = all
            .iter()
            .flat_map(|&x| all.iter().map(move |_| x as i8))
            .collect();
        let b: Vec<i8> = all
            .iter()
            .flat_map(|_| all.iter().map(|&y| y as i8))
            .collect();
        let (ta, tb) = (sub(d, &a), sub(d, &b));
        let n = [a.len()];
        for (op, f) in [
            (BinaryOp::Add, (|x, y| x + y) as fn(i64, i64) -> i64),
            (BinaryOp::Subtract, |x, y| x - y),
            (BinaryOp::Multiply, |x, y| x * y),
            (BinaryOp::BitwiseXor, |x, y| x ^ y),
        ] {
            let got = ints(&binary(op, &ta, &tb, &n, d).unwrap());
            let want: Vec<i8> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| wrap(f(x as i64, y as i64), bits, signed))
                .collect();
            assert_eq!(got, want, "{op:?} on {d:?}");
        }
        if !signed {
            let got = ints(&binary(BinaryOp::LeftShift, &ta, &tb, &n, d).unwrap());
            let want: Vec<i8> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| wrap((x as i64) << y, bits, false))
                .collect();
            assert_eq!(got, want, "left_shift on {d:?}");
        }
        let less = download::<u8>(&binary(BinaryOp::Less, &ta, &tb, &n, DType::U8).unwrap());
        let want: Vec<u8> = a.iter().zip(&b).map(|(x, y)| (x < y) as u8).collect();
        assert_eq!(less, want, "less on {d:?}");
        let not = ints(&unary(UnaryOp::BitwiseNot, &ta, d).unwrap());
        let want: Vec<i8> = a.iter().map(|&x| wrap(!(x as i64), bits, signed)).collect();
        assert_eq!(not, want, "bitwise_not on {d:?}");
        let neg = ints(&unary(UnaryOp::Negate, &ta, d).unwrap());
        let want: Vec<i8> = a.iter().map(|&x| wrap(-(x as i64), bits, signed)).collect();
        assert_eq!(neg, want, "negate on {d:?}");
    }
}

#[test]
fn bit_counts_use_the_types_width() {
    let t = sub(DType::U4, &[0, 1, 2, 15]);
    let clz = ints(&unary(UnaryOp::CountLeadingZeros, &t, DType::U4).unwrap());
    assert_eq!(clz, vec![4, 3, 2, 0]);
    let s = sub(DType::S4, &[-1, -8, 3]);
    let pop = ints(&unary(UnaryOp::PopulationCount, &s, DType::S4).unwrap());
    // 4 bits set in -1 (s4 holds 4), 1 in -8, 2 in 3.
    assert_eq!(pop, vec![4, 1, 2]);
}

#[test]
fn conversions_and_bitcasts() {
    let f = upload(
        &[6],
        DType::F32,
        &[9.7f32, 17.0, -1.0, 2.5, f32::INFINITY, -3.9],
    );
    // Float to integer truncates, then wraps (Nx writes <<trunc(x)::4>>); inf saturates.
    assert_eq!(
        ints(&as_type(&f, DType::U4).unwrap()),
        vec![9, 1, 15, 2, 15, 13]
    );
    assert_eq!(
        ints(&as_type(&f, DType::S4).unwrap()),
        vec![-7, 1, -1, 2, 7, -3]
    );
    let s = sub(DType::S2, &[-2, -1, 0, 1]);
    assert_eq!(
        download::<f32>(&as_type(&s, DType::F32).unwrap()),
        vec![-2.0, -1.0, 0.0, 1.0]
    );
    assert_eq!(ints(&as_type(&s, DType::U8).unwrap()), vec![-2, -1, 0, 1]); // 254, 255 as u8
                                                                            // u4 <-> s4 bitcasts keep the bits: 15 is -1.
    let u = sub(DType::U4, &[15, 8, 7]);
    assert_eq!(ints(&bitcast(&u, DType::S4).unwrap()), vec![-1, -8, 7]);
    let back = bitcast(&bitcast(&u, DType::S4).unwrap(), DType::U4).unwrap();
    assert_eq!(ints(&back), vec![15, 8, 7]);
    assert!(bitcast(&u, DType::U8).is_err());
}

#[test]
fn reductions_and_sort_read_sign_extended_values() {
    let s = sub(DType::S4, &[-8, 7, -1, 3, 0]);
    let sum = download::<i64>(&reduce(ReduceOp::Sum, &s, None, false, DType::S64).unwrap());
    assert_eq!(sum, vec![1]);
    let max = ints(&reduce(ReduceOp::Max, &s, None, false, DType::S4).unwrap());
    assert_eq!(max, vec![7]);
    let min = ints(&reduce(ReduceOp::Min, &s, None, false, DType::S4).unwrap());
    assert_eq!(min, vec![-8]);
    // The identity of an empty min over u4 is the type's largest value.
    let empty = upload::<i8>(&[0], DType::U4, &[]);
    let id = ints(&reduce(ReduceOp::Min, &empty, None, false, DType::U4).unwrap());
    assert_eq!(id, vec![15]);
    assert_eq!(ints(&sort(&s, 0, false).unwrap()), vec![-8, -1, 0, 3, 7]);
}
