//! The memory pool: dropped tensors return their blocks, which later allocations reuse.
//! Alone in its binary, since the pool's counters are process-wide.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp};
use nx_vulkan::{engine, DType, Tensor};

#[test]
fn dropped_tensors_return_to_the_pool() {
    let e = engine().unwrap();
    // Warm the pool (and the kernels) first.
    let warm = upload(&[4096], DType::F32, &vec![1.0f32; 4096]);
    let _ = download::<f32>(&binary(BinaryOp::Add, &warm, &warm, &[4096], DType::F32).unwrap());
    drop(warm);
    e.stream.synchronize().unwrap();
    let before = e.memory.stats();
    let rounds = 100;
    for r in 0..rounds {
        let mut keep: Vec<Tensor> = Vec::new();
        for _ in 0..10 {
            let a = upload(&[4096], DType::F32, &vec![r as f32; 4096]);
            let b = binary(BinaryOp::Add, &a, &a, &[4096], DType::F32).unwrap();
            keep.push(a);
            keep.push(b);
        }
        let last: Vec<f32> = download(keep.last().unwrap());
        assert!(last.iter().all(|&x| x == 2.0 * r as f32));
        drop(keep);
    }
    e.stream.synchronize().unwrap();
    let after = e.memory.stats();
    // 2000 tensor allocations of 16 KiB (plus staging): nearly all served from the pool.
    let reused = after.reused - before.reused;
    let created = after.created - before.created;
    assert!(
        reused >= 1500,
        "only {reused} allocations reused ({created} created)"
    );
    assert!(
        created <= 100,
        "{created} buffers created for 2000 same-size allocations"
    );
    // Everything dropped went back: live bytes return to the start (slack: the one
    // pooled staging block a download may still be holding, and the test's own warm-up).
    let slack = 1 << 20;
    assert!(
        after.live_bytes <= before.live_bytes + slack,
        "live bytes grew from {} to {}",
        before.live_bytes,
        after.live_bytes
    );
}

#[test]
fn a_large_size_class_keeps_a_spare_ready() {
    use nx_vulkan::memory::{Kind, Use, SPARE_BYTES};
    let e = engine().unwrap();
    // A class no other test here uses: 24 MiB.
    let bytes = SPARE_BYTES + (8 << 20);
    let before = e.memory.stats();
    let first = e.memory.alloc(Kind::Tensor, bytes, Use::Device).unwrap();
    // The allocation left no idle buffer of its class: the spare thread makes one, which
    // the next allocation of the class takes from the pool (no new buffer for it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while e.memory.stats().spares == before.spares {
        assert!(std::time::Instant::now() < deadline, "no spare within 10 s");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // (Buffers created other than as spares: the thread may make the next spare anytime.)
    let own = |s: nx_vulkan::memory::MemoryStats| s.created - s.spares;
    let created = own(e.memory.stats());
    let second = e.memory.alloc(Kind::Tensor, bytes, Use::Device).unwrap();
    assert_eq!(
        own(e.memory.stats()),
        created,
        "the second buffer was created, not taken"
    );
    assert!(e.memory.stats().reused > before.reused);
    assert_ne!(first.id, second.id);
}
