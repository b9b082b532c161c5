//! The command stream's waits, alone in their binary so that "nothing recorded" really
//! means nothing: no other test thread records work meanwhile.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType};

#[test]
fn synchronize_and_flush_in_every_state() {
    let e = engine().unwrap();
    // Nothing ever recorded.
    e.stream.synchronize().unwrap();
    e.stream.flush().unwrap();
    let t = upload(&[4], DType::S32, &[1i32, 2, 3, 4]);
    // Recorded, not submitted.
    let r = binary(BinaryOp::Add, &t, &t, &[4], DType::S32).unwrap();
    e.stream.synchronize().unwrap();
    assert_eq!(download::<i32>(&r), vec![2, 4, 6, 8]);
    // Everything completed and retired: no open batch.
    e.stream.synchronize().unwrap();
    // Submitted, maybe still running.
    let r = binary(BinaryOp::Multiply, &r, &t, &[4], DType::S32).unwrap();
    e.stream.flush().unwrap();
    e.stream.synchronize().unwrap();
    e.stream.synchronize().unwrap();
    assert_eq!(download::<i32>(&r), vec![2, 8, 18, 32]);
    let before = e.stream.stats();
    e.stream.synchronize().unwrap();
    assert_eq!(
        e.stream.stats().submits,
        before.submits,
        "an idle synchronize submits nothing"
    );
}
