//! Hazards across batches: a batch's end orders only what the host sees (see
//! `end_of_batch_barrier` in `exec`), so a later batch's work waits for earlier work
//! exactly where it touches the same blocks, and independent launches overlap. One test
//! function, alone in its binary: it reasons about which batches are open and finished,
//! which other tests' flushes would change.

mod common;

use common::*;
use nx_vulkan::ops::creation::{constant, Scalar};
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType, Tensor};

const F: DType = DType::F32;

fn add(a: &Tensor, b: &Tensor) -> Tensor {
    binary(BinaryOp::Add, a, b, &a.shape, F).unwrap()
}

#[test]
fn later_batches_wait_only_for_what_they_touch() {
    // Batches are submitted only when flushed or waited for.
    std::env::set_var("NX_VULKAN_EAGER_SUBMIT", "0");
    let e = engine().unwrap();
    let barriers = || e.stream.stats().barriers;
    // A size class nothing else in this binary allocates.
    let n = 54_321;
    let a = upload(&[n], F, &vec![1.0f32; n]);
    let b = upload(&[n], F, &vec![2.0f32; n]);
    e.stream.synchronize().unwrap();

    // Reading what a submitted batch writes waits for it.
    let y = add(&a, &a);
    e.stream.flush().unwrap();
    let before = barriers();
    let z = add(&y, &b);
    assert_eq!(
        barriers(),
        before + 1,
        "a read did not wait for an earlier batch's write"
    );

    // Work touching nothing an earlier batch writes does not wait (reads of the same
    // inputs are no hazard).
    e.stream.flush().unwrap();
    let before = barriers();
    let w = add(&b, &b);
    assert_eq!(
        barriers(),
        before,
        "independent work waited for an earlier batch"
    );

    // A buffer that a submitted batch still reads is written by a new owner only after a
    // barrier. `completed` moves only when the stream retires batches (at a submit or a
    // wait); a long add in the batch that reads `y` keeps it running past the retire that
    // follows its submit, and should it still have finished by then, no barrier is due.
    let y_id = y.block.id;
    let long = constant(&[1 << 24], F, Scalar::Float(1.0)).unwrap();
    let _busy = add(&long, &long);
    let r = add(&y, &a);
    let r_batch = e.stream.open_batch();
    drop(y);
    e.stream.flush().unwrap();
    let still_running = e.stream.completed_batch() < r_batch;
    let before = barriers();
    let v = add(&b, &b);
    assert_eq!(v.block.id, y_id, "the freed buffer was not reused");
    assert_eq!(
        barriers(),
        before + u64::from(still_running),
        "a new owner's write did not wait for old reads (or waited for finished ones)"
    );

    // Once the batches have finished, a new owner writes without a barrier.
    let w_id = w.block.id;
    let keep = add(&w, &a);
    drop(w);
    e.stream.synchronize().unwrap();
    let before = barriers();
    let u = add(&a, &a);
    assert_eq!(u.block.id, w_id, "the idle buffer was not reused");
    assert_eq!(barriers(), before, "a write waited for finished batches");

    // A block its owner wrote before may be updated in place (kernels that do so declare
    // it as written only), so such a write waits even for finished batches.
    e.stream.synchronize().unwrap();
    let before = barriers();
    e.stream.update(&u.block, &[0u8; 16]).unwrap();
    assert_eq!(
        barriers(),
        before + 1,
        "an update did not wait for its block's writer"
    );
    let mut u_expected = vec![2.0f32; n];
    u_expected[..4].fill(0.0);

    // An upload into a buffer that finished work wrote is read without a barrier: its
    // data came through the mapping, and the old owner's write is done.
    let q = add(&a, &a);
    let q_id = q.block.id;
    drop(q);
    e.stream.synchronize().unwrap();
    let up = upload(&[n], F, &vec![5.0f32; n]);
    assert_eq!(
        up.block.id, q_id,
        "the idle buffer was not reused for the upload"
    );
    let before = barriers();
    let sum = add(&up, &b);
    assert_eq!(
        barriers(),
        before,
        "a read of uploaded data waited for the old owner"
    );

    assert_eq!(download::<f32>(&z), vec![4.0; n]);
    assert_eq!(download::<f32>(&r), vec![3.0; n]);
    assert_eq!(download::<f32>(&v), vec![4.0; n]);
    assert_eq!(download::<f32>(&keep), vec![5.0; n]);
    assert_eq!(download::<f32>(&u), u_expected);
    assert_eq!(download::<f32>(&sum), vec![7.0; n]);
}
