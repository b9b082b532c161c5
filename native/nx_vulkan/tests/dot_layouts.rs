//! Transposed dot operands read in place: a left operand stored [batch, K, M] (a
//! gradient's `x^T dy`) or a right one stored [batch, N, K] (`dy w^T`) gives the bytes of
//! the same product with the operand copied into [batch, M, K] / [batch, K, N] first, and
//! launches no copy.

mod common;

use common::*;
use nx_vulkan::ops::dot::{dot, flags};
use nx_vulkan::ops::shape::transpose;
use nx_vulkan::{engine, DType, Tensor};

/// A tensor of `shape` and `dtype` with values drawn from `rng` (small integers for the
/// integer types, so that products do not wrap).
fn random(rng: &mut Rng, shape: &[usize], dtype: DType) -> Tensor {
    random_scaled(rng, shape, dtype, 1.0)
}

/// As `random`, floats times `scale`.
fn random_scaled(rng: &mut Rng, shape: &[usize], dtype: DType, scale: f64) -> Tensor {
    let n = numel(shape);
    let data = match dtype {
        DType::F32 => bytes(&rng.f32s(n, -2.0 * scale, 2.0 * scale)),
        DType::F64 => bytes(&(0..n).map(|_| rng.uniform(-2.0, 2.0)).collect::<Vec<f64>>()),
        DType::S32 => bytes(&(0..n).map(|_| rng.int(-9, 9) as i32).collect::<Vec<i32>>()),
        DType::F16 => bytes(
            &(0..n)
                .map(|_| f16_bits_from_f64(rng.uniform(-2.0, 2.0)))
                .collect::<Vec<u16>>(),
        ),
        other => panic!("no random {other:?}"),
    };
    Tensor::from_bytes(shape, dtype, &data).unwrap()
}

/// Launches made by `f` (this file's tests run one at a time: see `in_place_products`).
fn launches<T>(f: impl FnOnce() -> T) -> (T, u64) {
    let e = engine().unwrap();
    let before = e.stream.stats().dispatches;
    let out = f();
    (out, e.stream.stats().dispatches - before)
}

/// The product with a transposed operand stored as given (`at` [.., K, M] on the left, or
/// `bt` [.., N, K] on the right) against the one with it copied to the usual layout; the
/// launches of the in-place product.
fn check(left_transposed: bool, stored: &Tensor, other: &Tensor, batch: bool, what: &str) -> u64 {
    let rank = stored.shape.len();
    let swap: Vec<usize> = if batch { vec![0, 2, 1] } else { vec![1, 0] };
    let copied = transpose(stored, &swap).unwrap();
    let out = stored.dtype;
    let (b, k_stored, k_copied) = (if batch { vec![0] } else { vec![] }, rank - 2, rank - 1);
    let ((got, n), want) = if left_transposed {
        (
            launches(|| dot(stored, &[k_stored], &b, other, &[rank - 2], &b, out).unwrap()),
            dot(&copied, &[k_copied], &b, other, &[rank - 2], &b, out).unwrap(),
        )
    } else {
        (
            launches(|| dot(other, &[rank - 1], &b, stored, &[k_copied], &b, out).unwrap()),
            dot(other, &[rank - 1], &b, &copied, &[k_stored], &b, out).unwrap(),
        )
    };
    assert_eq!(got.shape, want.shape, "{what}");
    assert!(
        got.to_bytes().unwrap() == want.to_bytes().unwrap(),
        "{what}: the in-place product differs from the copied one"
    );
    n
}

/// A matrix shape `s`, with a leading batch axis of `batch` unless it is 0.
fn with_batch(batch: usize, s: [usize; 2]) -> Vec<usize> {
    if batch > 0 {
        vec![batch, s[0], s[1]]
    } else {
        s.to_vec()
    }
}

#[test]
fn in_place_products() {
    let mut rng = Rng::new(20_261_207);
    // (dtype, batch, M, K, N, launches when read in place)
    let left = [
        // sgemm.comp reading A k-major (M a multiple of 4).
        (DType::F32, 0, 128, 128, 784, 1),
        // M not a multiple of 4: A copied first, then sgemm.comp.
        (DType::F32, 0, 130, 64, 128, 2),
        // matmul.comp (small products accumulate in f64), a batch, f64 and integers.
        (DType::F32, 0, 128, 128, 10, 1),
        (DType::F32, 3, 33, 17, 5, 1),
        (DType::F64, 0, 70, 45, 66, 1),
        (DType::S32, 2, 9, 31, 65, 1),
        // Halves go to the cooperative-matrix kernels, which copy.
        (DType::F16, 0, 16, 16, 16, 0),
    ];
    for (dtype, batch, m, k, n, expected) in left {
        let at = random(&mut rng, &with_batch(batch, [k, m]), dtype);
        let b = random(&mut rng, &with_batch(batch, [k, n]), dtype);
        let what = format!("{dtype:?} A^T {:?} x B {:?}", at.shape, b.shape);
        let got = check(true, &at, &b, batch > 0, &what);
        if expected > 0 {
            assert_eq!(got, expected, "{what}: launches");
        }
    }
    // Values near 2^-70: no f32 tile of sgemm.comp's exact-tile modules (devices that may
    // flush subnormals) proves its products safe, and each recomputes in f64, reading A
    // k-major there too. (Elsewhere the plain modules run: the same check.)
    let tiny = 2f64.powi(-70);
    let at = random_scaled(&mut rng, &[256, 128], DType::F32, tiny);
    let b = random_scaled(&mut rng, &[256, 128], DType::F32, tiny);
    assert_eq!(check(true, &at, &b, false, "tiny f32 A^T x B"), 1);

    let right = [
        // matmul.comp reading B n-major.
        (DType::F32, 0, 128, 10, 128, 1),
        (DType::F64, 2, 65, 19, 33, 1),
        (DType::S32, 0, 7, 100, 3, 1),
        // sgemm.comp does not read B n-major: B is copied first.
        (DType::F32, 0, 128, 128, 256, 2),
    ];
    for (dtype, batch, m, k, n, expected) in right {
        let a = random(&mut rng, &with_batch(batch, [m, k]), dtype);
        let bt = random(&mut rng, &with_batch(batch, [n, k]), dtype);
        let what = format!("{dtype:?} A {:?} x B^T {:?}", a.shape, bt.shape);
        assert_eq!(
            check(false, &bt, &a, batch > 0, &what),
            expected,
            "{what}: launches"
        );
    }
}

/// The flag bits of `ops::dot::flags` are the shaders' `FLAG_*` defines.
#[test]
fn flags_match_the_shaders() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../shaders/linalg");
    let expected = [
        ("FLAG_ACCUMULATE", flags::ACCUMULATE),
        ("FLAG_A_KMAJOR", flags::A_KMAJOR),
        ("FLAG_B_NMAJOR", flags::B_NMAJOR),
    ];
    for file in ["matmul.comp", "sgemm.comp"] {
        let source = std::fs::read_to_string(format!("{dir}/{file}")).unwrap();
        let mut found = 0;
        for line in source.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            if let ["#define", name, value] = words[..] {
                if let Some((_, bit)) = expected.iter().find(|(n, _)| *n == name) {
                    assert_eq!(value, format!("{bit}u"), "{file}: {name}");
                    found += 1;
                }
            }
        }
        assert!(found >= 2, "{file} defines the flags");
    }
}
