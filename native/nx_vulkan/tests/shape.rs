//! Shape ops: reshape and squeeze (metadata), broadcast and transpose (strided copies).
//! Elements must move as bits: NaN payloads, -0.0 and 64-bit extremes survive.

mod common;

use common::*;
use nx_vulkan::ops::shape::{broadcast, copy_strided, reshape, squeeze, transpose};
use nx_vulkan::{DType, Error, Tensor};
use std::sync::Arc;

/// f32 bit patterns that a float conversion would change: NaN payloads (quiet and
/// signalling, both signs), -0.0, subnormals and infinities, then ordinary values.
fn f32_bit_patterns(n: usize, rng: &mut Rng) -> Vec<u32> {
    let special = [
        0x7fc0_0001u32,
        0xffc1_2345,
        0x7f80_0001,
        0xff80_4321,
        0x8000_0000,
        0x0000_0001,
        0x807f_ffff,
        0x7f80_0000,
        0xff80_0000,
    ];
    (0..n)
        .map(|i| {
            if i < special.len() {
                special[i]
            } else {
                rng.next_u32()
            }
        })
        .collect()
}

#[test]
fn reshape_is_metadata_only() {
    let data: Vec<i32> = (0..24).collect();
    let t = upload(&[2, 3, 4], DType::S32, &data);
    let r = reshape(&t, &[6, 4]).unwrap();
    assert_eq!(r.shape, vec![6, 4]);
    assert_eq!(r.dtype, DType::S32);
    assert!(
        Arc::ptr_eq(&r.block, &t.block),
        "reshape must share the block"
    );
    assert_eq!(download::<i32>(&r), data);
    let s = t.reshape(&[]).err();
    assert!(
        matches!(s, Some(Error::InvalidArgument(_))),
        "24 elements cannot be a scalar"
    );
    assert!(matches!(
        reshape(&t, &[5, 5]),
        Err(Error::InvalidArgument(_))
    ));
    // Empty tensors reshape among empty shapes.
    let e = Tensor::from_bytes(&[0, 3], DType::F32, &[]).unwrap();
    assert_eq!(reshape(&e, &[3, 0, 7]).unwrap().shape, vec![3, 0, 7]);
    assert!(reshape(&e, &[1]).is_err());
    // Rank 0 <-> rank 1.
    let s = upload(&[], DType::F64, &[2.5f64]);
    let r = reshape(&s, &[1, 1]).unwrap();
    assert_eq!(download::<f64>(&r), vec![2.5]);
}

#[test]
fn squeeze_drops_unit_axes() {
    let data: Vec<u8> = (0..6).collect();
    let t = upload(&[1, 3, 1, 2, 1], DType::U8, &data);
    let s = squeeze(&t, &[0, 2]).unwrap();
    assert_eq!(s.shape, vec![3, 2, 1]);
    assert!(Arc::ptr_eq(&s.block, &t.block));
    assert_eq!(squeeze(&t, &[0, 2, 4]).unwrap().shape, vec![3, 2]);
    assert_eq!(squeeze(&t, &[]).unwrap().shape, vec![1, 3, 1, 2, 1]);
    assert_eq!(download::<u8>(&s), data);
    assert!(matches!(squeeze(&t, &[1]), Err(Error::InvalidArgument(_))));
    assert!(matches!(squeeze(&t, &[5]), Err(Error::InvalidArgument(_))));
    let one = upload(&[1, 1], DType::S64, &[i64::MIN]);
    let s = squeeze(&one, &[0, 1]).unwrap();
    assert_eq!(s.shape, Vec::<usize>::new());
    assert_eq!(download::<i64>(&s), vec![i64::MIN]);
}

/// Broadcasts `data` (shape `shape`) to `out` on `axes` in several dtypes and checks
/// every element against the reference.
fn check_broadcast(shape: &[usize], out: &[usize], axes: &[usize], rng: &mut Rng) {
    let n = numel(shape);
    let ctx = format!("{shape:?} -> {out:?} on {axes:?}");
    let f: Vec<u32> = f32_bit_patterns(n, rng);
    let t = upload(shape, DType::F32, &f);
    let b = broadcast(&t, out, axes).unwrap();
    assert_eq!(b.shape, out.to_vec(), "{ctx}");
    assert_eq!(b.dtype, DType::F32);
    assert_eq!(
        download::<u32>(&b),
        broadcast_ref(&f, shape, out, axes),
        "f32 bits {ctx}"
    );

    let u: Vec<u8> = (0..n).map(|_| rng.next_u32() as u8).collect();
    let b = broadcast(&upload(shape, DType::U8, &u), out, axes).unwrap();
    assert_eq!(
        download::<u8>(&b),
        broadcast_ref(&u, shape, out, axes),
        "u8 {ctx}"
    );

    let s: Vec<i64> = (0..n)
        .map(|i| {
            if i == 0 {
                i64::MIN
            } else {
                rng.next_u64() as i64
            }
        })
        .collect();
    let b = broadcast(&upload(shape, DType::S64, &s), out, axes).unwrap();
    assert_eq!(
        download::<i64>(&b),
        broadcast_ref(&s, shape, out, axes),
        "s64 {ctx}"
    );

    let h: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
    let b = broadcast(&upload(shape, DType::F16, &h), out, axes).unwrap();
    assert_eq!(
        download::<u16>(&b),
        broadcast_ref(&h, shape, out, axes),
        "f16 bits {ctx}"
    );
}

#[test]
fn broadcast_cases() {
    let mut rng = Rng::new(1);
    let cases: &[(&[usize], &[usize], &[usize])] = &[
        (&[], &[3, 4], &[]),
        (&[3], &[2, 3], &[1]),
        (&[3], &[3, 2], &[0]),
        (&[3, 1], &[3, 4], &[0, 1]),
        (&[1, 4], &[3, 4], &[0, 1]),
        (&[3, 1], &[2, 3, 5], &[1, 2]),
        (&[2, 3], &[2, 7, 3], &[0, 2]),
        (&[2, 1, 3], &[4, 2, 5, 1, 3, 2], &[1, 2, 4]),
        (&[2, 3], &[3, 2, 2, 2, 5, 3], &[3, 5]),
        (&[5], &[5], &[0]),
        (&[1], &[1, 1, 1], &[2]),
        (&[7], &[300, 7], &[1]),
        (&[300], &[300, 129], &[0]),
    ];
    for &(shape, out, axes) in cases {
        check_broadcast(shape, out, axes, &mut rng);
    }
}

#[test]
fn broadcast_empty_and_errors() {
    let t = Tensor::from_bytes(&[0], DType::F32, &[]).unwrap();
    let b = broadcast(&t, &[2, 0], &[1]).unwrap();
    assert_eq!(b.shape, vec![2, 0]);
    assert!(b.to_bytes().unwrap().is_empty());
    let s = upload(&[], DType::S32, &[9i32]);
    let b = broadcast(&s, &[4, 0, 2], &[]).unwrap();
    assert_eq!(b.shape, vec![4, 0, 2]);
    assert!(b.to_bytes().unwrap().is_empty());
    let v = upload(&[3], DType::S32, &[1i32, 2, 3]);
    assert!(matches!(
        broadcast(&v, &[4], &[0]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        broadcast(&v, &[3, 4], &[2]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        broadcast(&v, &[3, 4], &[]),
        Err(Error::InvalidArgument(_))
    ));
}

/// Transposes a tensor of `shape` by `axes` in f32 (bit patterns), u8, s64, f64 and
/// f16, checking every element.
fn check_transpose(shape: &[usize], axes: &[usize], rng: &mut Rng) {
    let n = numel(shape);
    let ctx = format!("{shape:?} by {axes:?}");
    let (out_shape, _) = transpose_ref(&vec![0u8; n], shape, axes);

    let f = f32_bit_patterns(n, rng);
    let t = transpose(&upload(shape, DType::F32, &f), axes).unwrap();
    assert_eq!(t.shape, out_shape, "{ctx}");
    assert_eq!(
        download::<u32>(&t),
        transpose_ref(&f, shape, axes).1,
        "f32 bits {ctx}"
    );

    let u: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
    let t = transpose(&upload(shape, DType::U8, &u), axes).unwrap();
    assert_eq!(
        download::<u8>(&t),
        transpose_ref(&u, shape, axes).1,
        "u8 {ctx}"
    );

    let s: Vec<i64> = (0..n).map(|_| rng.next_u64() as i64).collect();
    let t = transpose(&upload(shape, DType::S64, &s), axes).unwrap();
    assert_eq!(
        download::<i64>(&t),
        transpose_ref(&s, shape, axes).1,
        "s64 {ctx}"
    );

    let d: Vec<u64> = (0..n)
        .map(|i| match i {
            0 => 0x7ff0_0000_0000_0001, // signalling NaN with payload
            1 => 0xfff8_dead_beef_0001,
            2 => 0x8000_0000_0000_0000,
            _ => rng.next_u64(),
        })
        .collect();
    let t = transpose(&upload(shape, DType::F64, &d), axes).unwrap();
    assert_eq!(
        download::<u64>(&t),
        transpose_ref(&d, shape, axes).1,
        "f64 bits {ctx}"
    );

    let h: Vec<u16> = (0..n).map(|_| rng.next_u32() as u16).collect();
    let t = transpose(&upload(shape, DType::F16, &h), axes).unwrap();
    assert_eq!(
        download::<u16>(&t),
        transpose_ref(&h, shape, axes).1,
        "f16 bits {ctx}"
    );
    // c128: 16-byte elements move whole (the copy and tiled kernels' W128 variants).
    let c: Vec<[u8; 16]> = (0..n)
        .map(|_| {
            let mut e = [0u8; 16];
            e[..8].copy_from_slice(&rng.next_u64().to_le_bytes());
            e[8..].copy_from_slice(&rng.next_u64().to_le_bytes());
            e
        })
        .collect();
    let src = Tensor::from_bytes(shape, DType::C128, &c.concat()).unwrap();
    let t = transpose(&src, axes).unwrap();
    assert_eq!(
        t.to_bytes().unwrap(),
        transpose_ref(&c, shape, axes).1.concat(),
        "c128 bits {ctx}"
    );
}

#[test]
fn transpose_every_permutation_of_rank_3() {
    let mut rng = Rng::new(2);
    for axes in permutations(3) {
        check_transpose(&[2, 3, 4], &axes, &mut rng);
        check_transpose(&[5, 1, 3], &axes, &mut rng);
    }
}

#[test]
fn transpose_rank_2_4_5() {
    let mut rng = Rng::new(3);
    check_transpose(&[3, 5], &[1, 0], &mut rng);
    check_transpose(&[257, 300], &[1, 0], &mut rng);
    for axes in [
        [3, 2, 1, 0],
        [0, 2, 1, 3],
        [1, 0, 3, 2],
        [3, 0, 1, 2],
        [0, 1, 3, 2],
        [2, 3, 0, 1],
    ] {
        check_transpose(&[2, 3, 4, 5], &axes, &mut rng);
    }
    for axes in [
        [4, 3, 2, 1, 0],
        [0, 2, 4, 1, 3],
        [1, 0, 2, 3, 4],
        [4, 0, 3, 1, 2],
    ] {
        check_transpose(&[2, 3, 1, 4, 2], &axes, &mut rng);
        check_transpose(&[3, 2, 5, 2, 3], &axes, &mut rng);
    }
    // Rank 6 with nothing to merge: the kernels' maximum rank.
    check_transpose(&[2, 3, 2, 3, 2, 3], &[5, 4, 3, 2, 1, 0], &mut rng);
}

/// Layouts the tiled kernel takes (both tile axes at least 16 long): ragged tile edges,
/// batch axes on either side, and every element width.
#[test]
fn transpose_tiled_layouts() {
    let mut rng = Rng::new(5);
    for axes in permutations(3) {
        check_transpose(&[3, 40, 50], &axes, &mut rng);
    }
    check_transpose(&[16, 16], &[1, 0], &mut rng);
    check_transpose(&[33, 65], &[1, 0], &mut rng);
    check_transpose(&[2, 17, 3, 33], &[0, 3, 2, 1], &mut rng);
    check_transpose(&[2, 17, 3, 33], &[3, 1, 0, 2], &mut rng);
    check_transpose(&[2, 2, 2, 2, 20, 20], &[0, 1, 2, 3, 5, 4], &mut rng);
    check_transpose(&[2, 20, 2, 2, 2, 20], &[5, 4, 3, 2, 1, 0], &mut rng);
}

/// The tiled kernel with source and destination offsets: a transposed window of a larger
/// source written into the middle of a larger destination.
#[test]
fn tiled_copy_with_offsets() {
    let (rows, cols) = (40, 50);
    let src: Vec<u32> = (0..(rows * cols + 7) as u32).collect();
    let s = upload(&[src.len()], DType::U32, &src);
    let dst_len = rows * cols + 11;
    let d = upload(&[dst_len], DType::U32, &vec![u32::MAX; dst_len]);
    // dst[5 + c * rows + r] = src[7 + r * cols + c] over (r, c) in rows x cols.
    copy_strided(
        &s,
        &[cols as isize, 1],
        7,
        &d,
        &[1, rows as isize],
        5,
        &[rows, cols],
    )
    .unwrap();
    let got: Vec<u32> = download(&d);
    let mut want = vec![u32::MAX; dst_len];
    for r in 0..rows {
        for c in 0..cols {
            want[5 + c * rows + r] = src[7 + r * cols + c];
        }
    }
    assert_eq!(got, want);
}

#[test]
fn transpose_identity_and_unit_axes_need_no_copy() {
    let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let t = upload(&[3, 1, 4], DType::F32, &data);
    let same = transpose(&t, &[0, 1, 2]).unwrap();
    assert!(Arc::ptr_eq(&same.block, &t.block));
    // Moving a size-1 axis keeps the row-major order: still the same data.
    let moved = transpose(&t, &[1, 0, 2]).unwrap();
    assert_eq!(moved.shape, vec![1, 3, 4]);
    assert_eq!(download::<f32>(&moved), data);
}

#[test]
fn transpose_empty_and_errors() {
    let t = Tensor::from_bytes(&[2, 0, 3], DType::F32, &[]).unwrap();
    let r = transpose(&t, &[2, 0, 1]).unwrap();
    assert_eq!(r.shape, vec![3, 2, 0]);
    assert!(r.to_bytes().unwrap().is_empty());
    let v = upload(&[2, 2], DType::S32, &[1i32, 2, 3, 4]);
    assert!(matches!(
        transpose(&v, &[0, 0]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        transpose(&v, &[0]),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        transpose(&v, &[0, 2]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn c128_transpose_of_rank_6() {
    // Six alternating axes: no merging, so a c128 copy split into 8-byte words would
    // need a seventh axis (it was an error).
    let mut rng = Rng::new(7);
    check_transpose(&[2, 3, 2, 3, 2, 3], &[5, 4, 3, 2, 1, 0], &mut rng);
}

#[test]
fn transpose_beyond_kernel_rank_is_unsupported_not_wrong() {
    // Seven alternating axes cannot be merged below the kernels' rank 6.
    let shape = [2, 3, 2, 3, 2, 3, 2];
    let data: Vec<i32> = (0..numel(&shape) as i32).collect();
    let t = upload(&shape, DType::S32, &data);
    match transpose(&t, &[6, 5, 4, 3, 2, 1, 0]) {
        Err(Error::Unsupported(_)) => {}
        Ok(r) => assert_eq!(
            download::<i32>(&r),
            transpose_ref(&data, &shape, &[6, 5, 4, 3, 2, 1, 0]).1
        ),
        Err(e) => panic!("unexpected error {e}"),
    }
}
