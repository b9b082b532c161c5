//! dot with contracting and batch axes against a host reference.
//!
//! Floats: an f32 result may differ from the f64 reference by at most
//! K * 2^-23 * sum_k |a_k * b_k| (the classic bound for K-term dot products in f32,
//! whatever the summation order), plus one rounding of the result. f64 results use the
//! same bound with 2^-52. Integer results are exact (wrapping).

mod common;

use common::matmul::check_matmul_f32;
use common::*;
use nx_vulkan::ops::dot::{dot, dot_via_f32};
use nx_vulkan::{DType, Error, Tensor};

/// Reference dot: for each output element, folds `mac(acc, a, b)` over the contracted
/// positions. Output: batch dims, then a's free dims, then b's free dims.
#[allow(clippy::too_many_arguments)]
fn dot_ref<T: Copy, A: Copy>(
    a: &[T],
    sa: &[usize],
    ca: &[usize],
    ba: &[usize],
    b: &[T],
    sb: &[usize],
    cb: &[usize],
    bb: &[usize],
    zero: A,
    mac: impl Fn(A, T, T) -> A,
) -> (Vec<usize>, Vec<A>) {
    let free = |s: &[usize], c: &[usize], bt: &[usize]| -> Vec<usize> {
        (0..s.len())
            .filter(|x| !c.contains(x) && !bt.contains(x))
            .collect()
    };
    let (fa, fb) = (free(sa, ca, ba), free(sb, cb, bb));
    let mut shape: Vec<usize> = ba.iter().map(|&x| sa[x]).collect();
    shape.extend(fa.iter().map(|&x| sa[x]));
    shape.extend(fb.iter().map(|&x| sb[x]));
    let kshape: Vec<usize> = ca.iter().map(|&x| sa[x]).collect();
    let out = (0..numel(&shape))
        .map(|o| {
            let oi = unravel(o, &shape);
            let (bi, rest) = oi.split_at(ba.len());
            let (ai_free, bi_free) = rest.split_at(fa.len());
            let mut ia = vec![0; sa.len()];
            let mut ib = vec![0; sb.len()];
            for (k, (&x, &y)) in ba.iter().zip(bb).enumerate() {
                ia[x] = bi[k];
                ib[y] = bi[k];
            }
            for (k, &x) in fa.iter().enumerate() {
                ia[x] = ai_free[k];
            }
            for (k, &y) in fb.iter().enumerate() {
                ib[y] = bi_free[k];
            }
            let mut acc = zero;
            for c in 0..numel(&kshape) {
                let ci = unravel(c, &kshape);
                for (k, (&x, &y)) in ca.iter().zip(cb).enumerate() {
                    ia[x] = ci[k];
                    ib[y] = ci[k];
                }
                acc = mac(acc, a[ravel(&ia, sa)], b[ravel(&ib, sb)]);
            }
            acc
        })
        .collect();
    (shape, out)
}

/// Runs an f32 dot (and the same in f64) on random data and checks it against the bound.
fn check_f32(
    sa: &[usize],
    ca: &[usize],
    ba: &[usize],
    sb: &[usize],
    cb: &[usize],
    bb: &[usize],
    rng: &mut Rng,
) {
    let ctx = format!("{sa:?} x {sb:?} contract {ca:?}/{cb:?} batch {ba:?}/{bb:?}");
    let a = rng.f32s(numel(sa), -1.0, 1.0);
    let b = rng.f32s(numel(sb), -1.0, 1.0);
    let k: usize = ca.iter().map(|&x| sa[x]).product();
    let (a64, b64): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|&x| x as f64).collect(),
        b.iter().map(|&x| x as f64).collect(),
    );
    let (shape, want) = dot_ref(
        &a64,
        sa,
        ca,
        ba,
        &b64,
        sb,
        cb,
        bb,
        (0.0, 0.0),
        |(s, m), x, y| (s + x * y, m + (x * y).abs()),
    );
    let t = dot(
        &upload(sa, DType::F32, &a),
        ca,
        ba,
        &upload(sb, DType::F32, &b),
        cb,
        bb,
        DType::F32,
    )
    .unwrap();
    assert_eq!(
        (t.shape.clone(), t.dtype),
        (shape.clone(), DType::F32),
        "{ctx}"
    );
    let got: Vec<f32> = download(&t);
    for (i, (&g, &(s, m))) in got.iter().zip(&want).enumerate() {
        let bound = k as f64 * 2f64.powi(-23) * m + 2f64.powi(-24) * s.abs();
        assert!(
            (g as f64 - s).abs() <= bound,
            "f32 {ctx}: element {i} got {g} want {s} (bound {bound:e})"
        );
    }
    let t = dot(
        &upload(sa, DType::F64, &a64),
        ca,
        ba,
        &upload(sb, DType::F64, &b64),
        cb,
        bb,
        DType::F64,
    )
    .unwrap();
    let got: Vec<f64> = download(&t);
    for (i, (&g, &(s, m))) in got.iter().zip(&want).enumerate() {
        let bound = 2.0 * k as f64 * 2f64.powi(-52) * m;
        assert!(
            (g - s).abs() <= bound,
            "f64 {ctx}: element {i} got {g} want {s}"
        );
    }
}

#[test]
fn matrix_products_of_awkward_sizes() {
    let mut rng = Rng::new(50);
    for (m, k, n) in [
        (1, 1, 1),
        (3, 5, 7),
        (65, 130, 17),
        (257, 64, 300),
        (1, 200, 1),
        (64, 16, 64),
        (70, 1, 3),
    ] {
        check_f32(&[m, k], &[1], &[], &[k, n], &[0], &[], &mut rng);
    }
}

/// Shapes the register-blocked f32 kernel (sgemm.comp) takes: K and N multiples of 4 and
/// outputs of at least 128x128, with partial 128x128 tiles, batches and split K.
#[test]
fn register_blocked_f32_edges_batches_and_split_k() {
    let mut rng = Rng::new(55);
    check_matmul_f32([1, 300, 260, 516], (1.0, 1.0), &mut rng);
    check_matmul_f32([3, 129, 36, 132], (1.0, 1.0), &mut rng);
    // K beyond one launch's 16,384: the second launch adds to the first's result.
    check_matmul_f32([1, 128, 16_392, 128], (1.0, 1.0), &mut rng);
}

/// `batch` products of m x k and k x n f16 or bf16 matrices: exact products summed in
/// f32 (on cooperative matrices where the device offers them for f16, else on sgemm.comp
/// after widening, or the generic kernel), one rounding to the type. Within the f32 bound
/// of the module doc plus half an ulp of the type (2^-11 relative for f16, 2^-8 for bf16;
/// 2^-25 absolute below f16's normal range).
fn check_matmul_half(ty: DType, batch: usize, m: usize, k: usize, n: usize, rng: &mut Rng) {
    check_half_product(dot, ty, batch, m, k, n, rng)
}

type DotFn =
    fn(&Tensor, &[usize], &[usize], &Tensor, &[usize], &[usize], DType) -> Result<Tensor, Error>;

fn check_half_product(
    dot: DotFn,
    ty: DType,
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    rng: &mut Rng,
) {
    let f16 = ty == DType::F16;
    let to_bits = if f16 { f16_bits_ref } else { bf16_bits_ref };
    let to_f64 = if f16 { f16_to_f64 } else { bf16_to_f64 };
    // The result's rounding: half an ulp for f16 (nearest), a whole one for bf16 (Nx keeps
    // the f32's top half: toward zero).
    let half_ulp = 2f64.powi(if f16 { -11 } else { -7 });
    let half = |v: Vec<f32>| -> Vec<u16> { v.into_iter().map(to_bits).collect() };
    let a = half(rng.f32s(batch * m * k, -1.0, 1.0));
    let b = half(rng.f32s(batch * k * n, -1.0, 1.0));
    let t = dot(
        &upload(&[batch, m, k], ty, &a),
        &[2],
        &[0],
        &upload(&[batch, k, n], ty, &b),
        &[1],
        &[0],
        ty,
    )
    .unwrap();
    let got: Vec<u16> = download(&t);
    let (a, b): (Vec<f64>, Vec<f64>) = (
        a.into_iter().map(to_f64).collect(),
        b.into_iter().map(to_f64).collect(),
    );
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut s, mut mag) = (0f64, 0f64);
                for p in 0..k {
                    let xy = a[z * m * k + i * k + p] * b[z * k * n + p * n + j];
                    s += xy;
                    mag += xy.abs();
                }
                let g = to_f64(got[z * m * n + i * n + j]);
                let bound = k as f64 * 2f64.powi(-23) * mag + half_ulp * s.abs() + 2f64.powi(-25);
                assert!(
                    (g - s).abs() <= bound,
                    "{ty:?} {batch} x {m}x{k}x{n}: ({z}, {i}, {j}) got {g} want {s} (bound {bound:e})"
                );
            }
        }
    }
}

/// f16 and bf16, each with whether this device runs its products on the
/// cooperative-matrix kernel.
fn half_types() -> [(DType, bool); 2] {
    let info = nx_vulkan::engine().unwrap().info();
    [
        (DType::F16, info.cooperative_matrix_f16),
        (DType::BF16, info.cooperative_matrix_bf16),
    ]
}

/// The shapes the cooperative-matrix kernel takes (M, N multiples of 128, K of 32, over
/// 2^24 multiply-adds), batched and with K split across launches, in f16 and in bf16 (on
/// devices with `VK_KHR_shader_bfloat16`'s cooperative matrices: f32 sums, rounded once to
/// bf16 by the kernel).
#[test]
fn half_products_for_the_cooperative_matrix_kernel() {
    let mut rng = Rng::new(77);
    for (ty, coopmat) in half_types() {
        println!("cooperative-matrix {ty:?} kernel: {coopmat}");
        check_matmul_half(ty, 1, 256, 384, 512, &mut rng);
        check_matmul_half(ty, 2, 128, 4096, 256, &mut rng);
        check_matmul_half(ty, 1, 128, 16_416, 128, &mut rng);
        // Off the kernel's tiles: zero-padded to them there, cut back.
        check_matmul_half(ty, 2, 520, 1000, 260, &mut rng);
        // Enough outputs for the modules of four 64x64 subgroups, 17 row tiles.
        check_matmul_half(ty, 1, 2176, 64, 2048, &mut rng);
        // Three K steps of 32, each module: the first refills a stage, the second stores
        // the last operands, the third only multiplies.
        check_matmul_half(ty, 1, 2048, 96, 2048, &mut rng);
        check_matmul_half(ty, 1, 1024, 96, 256, &mut rng);
    }
}

/// On the cooperative-matrix kernel an f16 (bf16) result is its f32 sums rounded once, to
/// nearest even: the same product with an f32 result (the same sums, in the same order)
/// rounded on the host gives every bit. Both module kinds (eight 64x32 subgroups per
/// tile, and four 64x64 ones from 2048² outputs). Devices
/// without the kernel compute the two results on different kernels (f64 sums for small
/// products), so there the test has nothing to compare and says so.
#[test]
fn half_results_are_their_f32_sums_rounded_once() {
    let mut rng = Rng::new(80);
    for (ty, coopmat) in half_types() {
        if !coopmat {
            println!("skipped for {ty:?}: no cooperative-matrix kernel on this device");
            continue;
        }
        let to_bits = if ty == DType::F16 {
            f16_bits_ref
        } else {
            bf16_bits_ref
        };
        for (m, k, n) in [(256, 512, 384), (2048, 64, 2048)] {
            let half = |len: usize, rng: &mut Rng| -> Vec<u16> {
                rng.f32s(len, -1.0, 1.0).into_iter().map(to_bits).collect()
            };
            let a = upload(&[m, k], ty, &half(m * k, &mut rng));
            let b = upload(&[k, n], ty, &half(k * n, &mut rng));
            let sums: Vec<f32> = download(&dot(&a, &[1], &[], &b, &[0], &[], DType::F32).unwrap());
            let got: Vec<u16> = download(&dot(&a, &[1], &[], &b, &[0], &[], ty).unwrap());
            for (i, (&g, &s)) in got.iter().zip(&sums).enumerate() {
                assert_eq!(
                    g,
                    to_bits(s),
                    "{ty:?} {m}x{k}x{n}: output {i}, f32 sum {s:e}"
                );
            }
        }
    }
}

/// bf16 and f16 products as `dot` does the large ones (over 2^34 multiply-adds) that the
/// cooperative-matrix kernel does not take: widened to f32, on sgemm.comp where the shapes
/// fit (the first two here), rounded once; and bf16 products through `dot` itself.
#[test]
fn half_products_widened_to_the_f32_kernel() {
    let mut rng = Rng::new(78);
    check_half_product(dot_via_f32, DType::BF16, 1, 256, 384, 512, &mut rng);
    check_half_product(dot_via_f32, DType::F16, 2, 130, 1028, 132, &mut rng);
    check_half_product(dot_via_f32, DType::BF16, 1, 20, 52, 26, &mut rng);
    check_matmul_half(DType::BF16, 1, 256, 384, 512, &mut rng);
}

#[test]
fn vectors_and_matrix_vector() {
    let mut rng = Rng::new(51);
    check_f32(&[1000], &[0], &[], &[1000], &[0], &[], &mut rng); // vector . vector -> scalar
    check_f32(&[37, 50], &[1], &[], &[50], &[0], &[], &mut rng); // matrix . vector
    check_f32(&[50], &[0], &[], &[50, 9], &[0], &[], &mut rng); // vector . matrix
    check_f32(&[3], &[], &[], &[4], &[], &[], &mut rng); // outer product (K = 1)
    check_f32(&[2, 3], &[], &[], &[4], &[], &[], &mut rng);
}

#[test]
fn transposed_operands_and_multiple_contracting_axes() {
    let mut rng = Rng::new(52);
    check_f32(&[33, 20], &[0], &[], &[33, 7], &[0], &[], &mut rng); // a^T b
    check_f32(&[20, 33], &[1], &[], &[7, 33], &[1], &[], &mut rng); // a b^T
    check_f32(&[33, 20], &[0], &[], &[7, 33], &[1], &[], &mut rng); // a^T b^T
    check_f32(&[4, 3, 5], &[0, 2], &[], &[5, 6, 4], &[2, 0], &[], &mut rng);
    check_f32(&[2, 3, 4], &[], &[], &[], &[], &[], &mut rng); // times a scalar
}

#[test]
fn batched_with_batch_axes_anywhere() {
    let mut rng = Rng::new(53);
    check_f32(&[4, 3, 5], &[2], &[0], &[4, 5, 6], &[1], &[0], &mut rng); // standard
    check_f32(&[3, 4, 5], &[2], &[1], &[5, 6, 4], &[0], &[2], &mut rng); // batch in the middle / last
    check_f32(
        &[2, 3, 4, 5],
        &[1, 3],
        &[0],
        &[5, 2, 3, 6],
        &[2, 0],
        &[1],
        &mut rng,
    );
    check_f32(
        &[2, 3, 7, 5],
        &[3],
        &[1, 0],
        &[5, 3, 2, 4],
        &[0],
        &[1, 2],
        &mut rng,
    ); // two batch axes, reordered
    check_f32(&[70, 1, 65], &[2], &[0], &[70, 65, 2], &[1], &[0], &mut rng);
}

#[test]
fn s32_is_exact_and_wraps() {
    let mut rng = Rng::new(54);
    for (sa, ca, ba, sb, cb, bb) in [
        (vec![17, 70], vec![1], vec![], vec![70, 9], vec![0], vec![]),
        (
            vec![3, 4, 5],
            vec![2],
            vec![1],
            vec![5, 6, 4],
            vec![0],
            vec![2],
        ),
        (vec![65, 3], vec![0], vec![], vec![65, 66], vec![0], vec![]),
    ] {
        let a: Vec<i32> = (0..numel(&sa))
            .map(|i| {
                if i % 2 == 0 {
                    rng.next_u32() as i32
                } else {
                    rng.int(-50, 50) as i32
                }
            })
            .collect();
        let b: Vec<i32> = (0..numel(&sb)).map(|_| rng.next_u32() as i32).collect();
        let (shape, want) = dot_ref(&a, &sa, &ca, &ba, &b, &sb, &cb, &bb, 0i32, |s, x, y| {
            s.wrapping_add(x.wrapping_mul(y))
        });
        let t = dot(
            &upload(&sa, DType::S32, &a),
            &ca,
            &ba,
            &upload(&sb, DType::S32, &b),
            &cb,
            &bb,
            DType::S32,
        )
        .unwrap();
        assert_eq!(t.shape, shape);
        assert_eq!(download::<i32>(&t), want, "s32 {sa:?} x {sb:?}");
        let a64: Vec<i64> = a.iter().map(|&x| x as i64 * 3).collect();
        let b64: Vec<i64> = b.iter().map(|&x| x as i64).collect();
        let (_, want) = dot_ref(&a64, &sa, &ca, &ba, &b64, &sb, &cb, &bb, 0i64, |s, x, y| {
            s.wrapping_add(x.wrapping_mul(y))
        });
        let t = dot(
            &upload(&sa, DType::S64, &a64),
            &ca,
            &ba,
            &upload(&sb, DType::S64, &b64),
            &cb,
            &bb,
            DType::S64,
        )
        .unwrap();
        assert_eq!(download::<i64>(&t), want, "s64 {sa:?} x {sb:?}");
    }
}

#[test]
fn mixed_operand_types() {
    let mut rng = Rng::new(55);
    let (m, k, n) = (9, 40, 11);
    let a: Vec<i32> = (0..m * k).map(|_| rng.int(-1000, 1000) as i32).collect();
    let b = rng.f32s(k * n, -1.0, 1.0);
    let (a64, b64): (Vec<f64>, Vec<f64>) = (
        a.iter().map(|&x| x as f64).collect(),
        b.iter().map(|&x| x as f64).collect(),
    );
    let (_, want) = dot_ref(
        &a64,
        &[m, k],
        &[1],
        &[],
        &b64,
        &[k, n],
        &[0],
        &[],
        (0.0, 0.0),
        |(s, mm), x, y| (s + x * y, mm + (x * y).abs()),
    );
    let check = |got: Vec<f32>, what: &str| {
        for (i, (&g, &(s, mm))) in got.iter().zip(&want).enumerate() {
            let bound = k as f64 * 2f64.powi(-23) * mm + 2f64.powi(-24) * s.abs();
            assert!(
                (g as f64 - s).abs() <= bound,
                "{what}: element {i} got {g} want {s}"
            );
        }
    };
    let tb = upload(&[k, n], DType::F32, &b);
    let t = dot(
        &upload(&[m, k], DType::S32, &a),
        &[1],
        &[],
        &tb,
        &[0],
        &[],
        DType::F32,
    )
    .unwrap();
    check(download(&t), "s32 x f32");
    let wide: Vec<i64> = a.iter().map(|&x| x as i64).collect();
    let t = dot(
        &upload(&[m, k], DType::S64, &wide),
        &[1],
        &[],
        &tb,
        &[0],
        &[],
        DType::F32,
    )
    .unwrap();
    check(download(&t), "s64 x f32");
    let small: Vec<u8> = a.iter().map(|&x| x.unsigned_abs() as u8).collect();
    let (_, want8) = dot_ref(
        &small,
        &[m, k],
        &[1],
        &[],
        &small,
        &[m, k],
        &[1],
        &[],
        0u32,
        |s, x, y| s + x as u32 * y as u32,
    );
    let t = dot(
        &upload(&[m, k], DType::U8, &small),
        &[1],
        &[],
        &upload(&[m, k], DType::U8, &small),
        &[1],
        &[],
        DType::U32,
    )
    .unwrap();
    assert_eq!(download::<u32>(&t), want8, "u8 x u8 -> u32");
}

#[test]
fn empty_dimensions() {
    // K = 0: zeros. M = 0 or N = 0: empty results.
    let a = Tensor::from_bytes(&[3, 0], DType::F32, &[]).unwrap();
    let b = Tensor::from_bytes(&[0, 4], DType::F32, &[]).unwrap();
    let t = dot(&a, &[1], &[], &b, &[0], &[], DType::F32).unwrap();
    assert_eq!(t.shape, vec![3, 4]);
    assert_eq!(download::<f32>(&t), vec![0.0; 12]);
    let ai = Tensor::from_bytes(&[2, 0], DType::S32, &[]).unwrap();
    let t = dot(&ai, &[1], &[], &ai, &[1], &[], DType::S32).unwrap();
    assert_eq!(download::<i32>(&t), vec![0; 4]);
    let m0 = Tensor::from_bytes(&[0, 5], DType::F32, &[]).unwrap();
    let b = upload(&[5, 4], DType::F32, &[1.0f32; 20]);
    let t = dot(&m0, &[1], &[], &b, &[0], &[], DType::F32).unwrap();
    assert_eq!(t.shape, vec![0, 4]);
    assert!(t.to_bytes().unwrap().is_empty());
    let n0 = Tensor::from_bytes(&[5, 0], DType::F32, &[]).unwrap();
    let t = dot(&b, &[0], &[], &n0, &[0], &[], DType::F32).unwrap();
    assert_eq!(t.shape, vec![4, 0]);
}

#[test]
fn more_batches_than_one_launch_holds() {
    // 65,540 batches: the z grid axis holds 65,535, so a second launch with offset
    // addresses does the rest. Hashed values make a misplaced batch visible.
    let batches = 65_540usize;
    let h = |i: usize, m: usize| ((i.wrapping_mul(2_654_435_761) >> 7) % m) as f32;
    let a: Vec<f32> = (0..batches * 2).map(|i| h(i, 97)).collect();
    let b: Vec<f32> = (0..batches * 2).map(|i| h(i + 1, 89)).collect();
    let ta = upload(&[batches, 1, 2], DType::F32, &a);
    let tb = upload(&[batches, 2, 1], DType::F32, &b);
    let t = dot(&ta, &[2], &[0], &tb, &[1], &[0], DType::F32).unwrap();
    assert_eq!(t.shape, vec![batches, 1, 1]);
    let got: Vec<f32> = download(&t);
    for i in 0..batches {
        let want = a[2 * i] * b[2 * i] + a[2 * i + 1] * b[2 * i + 1];
        assert_eq!(got[i], want, "batch {i}");
    }
}

fn long_contraction(k: usize) {
    let a: Vec<f32> = (0..k).map(|i| (i % 3) as f32 - 1.0).collect();
    let b: Vec<f32> = (0..k).map(|i| (i % 5) as f32).collect();
    let want: f64 = a.iter().zip(&b).map(|(&x, &y)| x as f64 * y as f64).sum();
    let t = dot(
        &upload(&[k], DType::F32, &a),
        &[0],
        &[],
        &upload(&[k], DType::F32, &b),
        &[0],
        &[],
        DType::F32,
    )
    .unwrap();
    assert_eq!(download::<f32>(&t), vec![want as f32], "K = {k}");
}

#[test]
fn long_contraction_below_the_lavapipe_loop_limit() {
    // Small integers: every partial sum is exact. 90,000 / 16 = 5,625 K-steps.
    long_contraction(90_000);
}

#[test]
fn long_contraction_past_the_lavapipe_loop_limit() {
    long_contraction(200_000);
}

#[test]
fn mismatched_axes_are_errors() {
    let a = upload(&[2, 3], DType::F32, &[0f32; 6]);
    let b = upload(&[4, 2], DType::F32, &[0f32; 8]);
    assert!(matches!(
        dot(&a, &[1], &[], &b, &[0], &[], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        dot(&a, &[1, 1], &[], &b, &[0, 1], &[], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        dot(&a, &[2], &[], &b, &[0], &[], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        dot(&a, &[0], &[], &b, &[], &[], DType::F32),
        Err(Error::InvalidArgument(_))
    ));
}
