//! Submission policy `NX_VULKAN_EAGER_SUBMIT=2` (keep one queued, `exec_submit`): while one
//! batch runs, the open batch is queued behind it once it has collected commands for
//! `QUEUE_AFTER`; with two submitted and unfinished, commands collect. Alone in its binary:
//! it counts submits, which other test threads would change.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType};
use std::time::Duration;

#[test]
fn while_one_batch_runs_the_next_is_queued_behind_it() {
    std::env::set_var("NX_VULKAN_EAGER_SUBMIT", "2");
    let e = engine().unwrap();
    // Long enough on lavapipe (milliseconds) to still run while the host records more.
    let n = 1 << 24;
    let x = upload(&[n], DType::F32, &vec![1.0f32; n]);
    let s = upload(&[4], DType::S32, &[1i32; 4]);
    e.stream.synchronize().unwrap();
    let before = e.stream.stats().submits;
    // The GPU is idle: the long command goes at once.
    let long = binary(BinaryOp::Add, &x, &x, &[n], DType::F32).unwrap();
    assert_eq!(e.stream.stats().submits, before + 1);
    // While it runs: small commands collect, and once the open batch is older than
    // QUEUE_AFTER it is queued behind the running one.
    let mut acc = binary(BinaryOp::Add, &s, &s, &[4], DType::S32).unwrap();
    std::thread::sleep(Duration::from_micros(50));
    acc = binary(BinaryOp::Add, &acc, &s, &[4], DType::S32).unwrap();
    let queued = e.stream.stats().submits;
    // With two batches submitted and the first still running, the next ones collect.
    for _ in 0..3 {
        acc = binary(BinaryOp::Add, &acc, &s, &[4], DType::S32).unwrap();
    }
    let collecting = e.stream.stats().submits;
    assert_eq!(download::<i32>(&acc), vec![6; 4]);
    assert_eq!(download::<f32>(&long)[..4], [2.0; 4]);
    assert_eq!(
        queued,
        before + 2,
        "the open batch was not queued behind the running one"
    );
    assert_eq!(
        collecting, queued,
        "commands did not collect behind two batches"
    );
}
