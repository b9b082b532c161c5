//! Eager submission (`NX_VULKAN_EAGER_SUBMIT=1`, the default on GPUs): a command recorded
//! while the GPU is idle is submitted at once, so the GPU works while the host records the
//! rest. Alone in its binary: it counts submits, which other test threads would change.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType};

#[test]
fn a_command_recorded_while_the_gpu_is_idle_is_submitted_at_once() {
    std::env::set_var("NX_VULKAN_EAGER_SUBMIT", "1");
    let e = engine().unwrap();
    let n = 1000;
    let x = upload(&[n], DType::S32, &vec![1i32; n]);
    e.stream.synchronize().unwrap();
    let before = e.stream.stats();
    let mut acc = binary(BinaryOp::Add, &x, &x, &[n], DType::S32).unwrap();
    assert_eq!(
        e.stream.stats().submits,
        before.submits + 1,
        "the first command after an idle GPU was not submitted"
    );
    // A dependent chain: submitted in pieces as the GPU goes idle, every result right.
    for _ in 0..200 {
        acc = binary(BinaryOp::Add, &acc, &x, &[n], DType::S32).unwrap();
    }
    assert_eq!(download::<i32>(&acc), vec![202; n]);
    let after = e.stream.stats();
    assert!(after.submits > before.submits + 1);
    assert!(after.submits <= before.submits + 202);
}
