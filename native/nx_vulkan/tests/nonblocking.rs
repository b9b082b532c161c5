//! Non-blocking mode, in which the NIFs first run on the BEAM's normal schedulers: each
//! point where the engine would block answers `Error::WouldBlock`, and the same call made
//! normally then succeeds. (Back-pressure from batches in flight is the one point not
//! provoked here: it needs the GPU to fall 16 batches behind.)

mod common;

use common::*;
use nx_vulkan::nonblocking::{attempt, HOST_COPY_BYTES};
use nx_vulkan::ops::dot::dot;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType, Error, Result, Tensor};

fn blocked_on<T>(r: Result<T>) -> &'static str {
    match r {
        Err(Error::WouldBlock(what)) => what,
        Err(e) => panic!("expected WouldBlock, got {e}"),
        Ok(_) => panic!("expected WouldBlock, the call completed"),
    }
}

fn add(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    binary(BinaryOp::Add, a, b, &a.shape, DType::F32)
}

// One test, in its own process: the first step needs an engine nothing has touched.
#[test]
fn each_blocking_point_answers_would_block_and_the_call_then_succeeds_normally() {
    assert_eq!(
        blocked_on(attempt(|| engine().map(|_| ()))),
        "initialising the engine"
    );
    let a = upload(&[4], DType::F32, &[1.0f32, 2.0, 3.0, 4.0]);
    let b = upload(&[4], DType::F32, &[10.0f32, 20.0, 30.0, 40.0]);

    // Nothing is built or pooled for an add yet.
    let first = blocked_on(attempt(|| add(&a, &b)));
    assert!(
        ["a pipeline build", "a device allocation"].contains(&first),
        "{first}"
    );
    let want = add(&a, &b).unwrap();
    assert_eq!(download::<f32>(&want), [11.0, 22.0, 33.0, 44.0]);

    // With the pipeline built, a block of the size class idle in the pool and the GPU
    // idle, the whole round trip runs without blocking.
    let spare = add(&a, &b).unwrap();
    engine().unwrap().stream.synchronize().unwrap();
    drop(spare);
    let sum = attempt(|| add(&a, &b)).unwrap();
    engine().unwrap().stream.synchronize().unwrap();
    let mut got = [0u8; 16];
    attempt(|| sum.read_into(&mut got)).unwrap();
    assert_eq!(values::<f32>(&got), [11.0, 22.0, 33.0, 44.0]);

    // A host wait longer than the spin budget: a chain of 64 dependent 512^3 matmuls
    // takes over a millisecond on any device (most of a second on lavapipe).
    let n = 512;
    let x = upload(&[n, n], DType::F32, &Rng::new(7).f32s(n * n, -0.05, 0.05));
    let mut y = dot(&x, &[1], &[], &x, &[0], &[], DType::F32).unwrap();
    engine().unwrap().stream.synchronize().unwrap();
    for _ in 0..63 {
        y = dot(&y, &[1], &[], &x, &[0], &[], DType::F32).unwrap();
    }
    let mut head = [0u8; 16];
    assert_eq!(
        blocked_on(attempt(|| y.read_into(&mut head))),
        "the GPU (a host wait)"
    );
    y.read_into(&mut head).unwrap();
    assert_eq!(head[..], y.to_bytes().unwrap()[..16]);

    // A host copy too large for a normal scheduler, either way.
    let big = vec![0u8; HOST_COPY_BYTES + 4];
    let shape = [big.len() / 4];
    assert_eq!(
        blocked_on(attempt(|| Tensor::from_bytes(&shape, DType::F32, &big))),
        "a large host copy"
    );
    let t = Tensor::from_bytes(&shape, DType::F32, &big).unwrap();
    assert_eq!(blocked_on(attempt(|| t.to_bytes())), "a large host copy");
    assert_eq!(t.to_bytes().unwrap(), big);
}
