//! Stream-ordered reuse of pooled buffers (see `memory`'s module doc): a dropped tensor's
//! buffer serves later GPU work as soon as the batches using it are ordered before that
//! work, and host writes only once they have finished. One test function, alone in its
//! binary: it reasons about which batch is open, which other tests' flushes would change.

mod common;

use common::*;
use nx_vulkan::memory::SAME_BATCH_REUSE_BYTES;
use nx_vulkan::ops::creation::{constant, Scalar};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{engine, DType, Tensor};

const F: DType = DType::F32;

fn add(a: &Tensor, b: &Tensor) -> Tensor {
    binary(BinaryOp::Add, a, b, &a.shape, F).unwrap()
}

fn scalar(t: &Tensor) -> f32 {
    download::<f32>(t)[0]
}

#[test]
fn buffers_are_reused_in_stream_order() {
    // Batches stay open until flushed or waited for: no eager submission (which a GPU
    // device would do whenever it is idle).
    std::env::set_var("NX_VULKAN_EAGER_SUBMIT", "0");
    // No spare buffers either: an idle spare would be taken before the buffers whose
    // stream-ordered reuse this test follows.
    std::env::set_var("NX_VULKAN_SPARES", "0");
    let e = engine().unwrap();
    // A size class nothing else in this binary allocates.
    let n = 12_345;
    let x = upload(&[n], F, &vec![1.5f32; n]);
    e.stream.synchronize().unwrap();

    // A small buffer the open batch still uses is not taken: a new one is cheaper than
    // the barrier that would order the new writes after the old reads.
    let y = add(&x, &x);
    let y_id = y.block.id;
    let w = unary(UnaryOp::Negate, &y, F).unwrap();
    drop(y);
    let z = binary(BinaryOp::Multiply, &x, &x, &[n], F).unwrap();
    assert_ne!(z.block.id, y_id, "took a small buffer the open batch uses");

    // Once that batch is submitted (not finished: nothing waited), GPU work may take it;
    // a barrier (the stream's hazard tracking spans batches) orders the old reads before
    // the new writes.
    e.stream.flush().unwrap();
    let v = add(&x, &x);
    assert_eq!(
        v.block.id, y_id,
        "a buffer of a submitted batch was not reused"
    );
    assert_eq!(download::<f32>(&w), vec![-3.0; n]);
    assert_eq!(download::<f32>(&v), vec![3.0; n]);

    // The host writes only buffers no batch uses: not z's while its batch is open...
    let z_id = z.block.id;
    let _keep = add(&z, &x);
    drop(z);
    let u = upload(&[n], F, &vec![7.0f32; n]);
    assert_ne!(
        u.block.id, z_id,
        "the host wrote a buffer a batch still uses"
    );
    // ... and z's once the batches are done.
    e.stream.synchronize().unwrap();
    let u2 = upload(&[n], F, &vec![8.0f32; n]);
    assert_eq!(
        u2.block.id, z_id,
        "an idle buffer was not reused for an upload"
    );
    assert_eq!(download::<f32>(&u), vec![7.0; n]);
    assert_eq!(download::<f32>(&u2), vec![8.0; n]);

    // An upload that finds no idle buffer travels in the command stream, into a buffer
    // GPU work may take: here one of a submitted batch that is still running (a long add
    // in the same batch keeps it running), so neither a new buffer nor a wait.
    let long = constant(&[1 << 24], F, Scalar::Float(1.0)).unwrap();
    let _busy = add(&long, &long);
    let s = add(&x, &x);
    let s_id = s.block.id;
    drop(s);
    e.stream.flush().unwrap();
    let (stats, created) = (e.stream.stats(), e.memory.stats().created);
    let u3 = upload(&[n], F, &vec![9.0f32; n]);
    assert_eq!(
        u3.block.id, s_id,
        "the upload did not take the submitted batch's buffer"
    );
    assert_eq!(
        e.stream.stats().updates,
        stats.updates + 1,
        "not carried in the stream"
    );
    assert_eq!(e.memory.stats().created, created);
    assert_eq!(download::<f32>(&u3), vec![9.0; n]);

    // Large buffers are taken even while the open batch reads them, after a barrier.
    let big = (SAME_BATCH_REUSE_BYTES / 4) as usize;
    let a = constant(&[big], F, Scalar::Float(0.5)).unwrap();
    let b = add(&a, &a);
    let c = unary(UnaryOp::Negate, &b, F).unwrap();
    let b_id = b.block.id;
    drop(b);
    let barriers = e.stream.stats().barriers;
    let d = binary(BinaryOp::Multiply, &a, &a, &[big], F).unwrap();
    assert_eq!(
        d.block.id, b_id,
        "a large buffer of the open batch was not reused"
    );
    assert_eq!(
        e.stream.stats().barriers,
        barriers + 1,
        "no barrier ordered the new writes after the old reads"
    );
    let extreme = |t: &Tensor, op| scalar(&reduce(op, t, None, false, F).unwrap());
    assert_eq!(
        (extreme(&c, ReduceOp::Min), extreme(&c, ReduceOp::Max)),
        (-1.0, -1.0)
    );
    assert_eq!(
        (extreme(&d, ReduceOp::Min), extreme(&d, ReduceOp::Max)),
        (0.25, 0.25)
    );
}
