//! Many threads recording and reading at once, and batches queued past the stream's
//! limits. (The pool-reuse test is in `memory.rs`, a binary of its own.)

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{engine, DType};

/// One chain: upload two vectors, (a + b) * a, its sum; download both and check them.
/// Integer-valued data keeps every f32 result exact.
fn chain(rng: &mut Rng, ctx: &str) {
    let n = rng.int(1, 600) as usize;
    if rng.next_u32().is_multiple_of(3) {
        let a: Vec<i32> = (0..n).map(|_| rng.int(-1000, 1000) as i32).collect();
        let b: Vec<i32> = (0..n).map(|_| rng.int(-1000, 1000) as i32).collect();
        let (ta, tb) = (upload(&[n], DType::S32, &a), upload(&[n], DType::S32, &b));
        let c = binary(BinaryOp::Add, &ta, &tb, &[n], DType::S32).unwrap();
        let d = binary(BinaryOp::Multiply, &c, &ta, &[n], DType::S32).unwrap();
        let s = reduce(ReduceOp::Sum, &d, None, false, DType::S32).unwrap();
        let want: Vec<i32> = (0..n).map(|i| (a[i] + b[i]) * a[i]).collect();
        assert_eq!(
            download::<i32>(&s),
            vec![want.iter().sum::<i32>()],
            "{ctx}: s32 sum"
        );
        assert_eq!(download::<i32>(&d), want, "{ctx}: s32 chain");
    } else {
        let a: Vec<f32> = (0..n).map(|_| rng.int(-100, 100) as f32).collect();
        let b: Vec<f32> = (0..n).map(|_| rng.int(-100, 100) as f32).collect();
        let (ta, tb) = (upload(&[n], DType::F32, &a), upload(&[n], DType::F32, &b));
        let c = binary(BinaryOp::Add, &ta, &tb, &[n], DType::F32).unwrap();
        let d = binary(BinaryOp::Multiply, &c, &ta, &[n], DType::F32).unwrap();
        let s = reduce(ReduceOp::Sum, &d, None, false, DType::F32).unwrap();
        let want: Vec<f32> = (0..n).map(|i| (a[i] + b[i]) * a[i]).collect();
        assert_eq!(download::<f32>(&d), want, "{ctx}: f32 chain");
        assert_eq!(
            download::<f32>(&s),
            vec![want.iter().sum::<f32>()],
            "{ctx}: f32 sum"
        );
    }
}

#[test]
fn sixteen_threads_of_op_chains() {
    let handles: Vec<_> = (0..16)
        .map(|t| {
            std::thread::spawn(move || {
                let mut rng = Rng::new(100 + t);
                for i in 0..200 {
                    chain(&mut rng, &format!("thread {t} chain {i}"));
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a worker thread failed");
    }
}

#[test]
fn a_tensor_read_by_many_threads_while_others_write() {
    // One shared input, read concurrently; each thread derives its own result from it.
    let n = 4096;
    let base: Vec<f32> = (0..n).map(|i| (i % 251) as f32).collect();
    let shared = std::sync::Arc::new(upload(&[n], DType::F32, &base));
    let handles: Vec<_> = (0..8)
        .map(|t| {
            let shared = shared.clone();
            let base = base.clone();
            std::thread::spawn(move || {
                for i in 0..50 {
                    let k = (t * 50 + i) as f32;
                    let kt = upload(&[], DType::F32, &[k]);
                    let r = binary(BinaryOp::Add, &shared, &kt, &[n], DType::F32).unwrap();
                    assert_eq!(download::<f32>(&shared), base, "shared input changed");
                    let got: Vec<f32> = download(&r);
                    assert!(
                        got.iter().zip(&base).all(|(&g, &b)| g == b + k),
                        "thread {t} iteration {i}"
                    );
                }
            })
        })
        .collect();
    for h in handles {
        h.join().expect("a worker thread failed");
    }
}

#[test]
fn many_batches_in_flight() {
    // More dispatches than one batch holds, and more batches than may be in flight.
    let e = engine().unwrap();
    let one = upload(&[], DType::S32, &[1i32]);
    let mut acc = upload(&[], DType::S32, &[0i32]);
    let before = e.stream.stats();
    for _ in 0..(256 * 20 + 7) {
        acc = binary(BinaryOp::Add, &acc, &one, &[], DType::S32).unwrap();
    }
    assert_eq!(download::<i32>(&acc), vec![256 * 20 + 7]);
    let after = e.stream.stats();
    assert!(
        after.submits - before.submits >= 20,
        "{} submits",
        after.submits - before.submits
    );
    e.stream.synchronize().unwrap();
}
