//! The persisted pipeline cache (`kernels::cache`): its data round-trips into the engine,
//! and damaged or foreign data is refused with a reason before the driver sees it.

use nx_vulkan::ops::elementwise::{unary, UnaryOp};
use nx_vulkan::{engine, DType, Error, Tensor};
use sha2::{Digest, Sha256};

/// Rewrites the checksum of a persisted cache after its payload was edited.
fn reseal(bytes: &mut [u8]) {
    let sum = Sha256::digest(&bytes[48..]);
    bytes[16..48].copy_from_slice(&sum);
}

fn refused(bytes: &[u8]) -> String {
    let e = engine().unwrap();
    match e.kernels.load_cache(bytes, e.info()) {
        Err(Error::InvalidArgument(m)) => m,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_persisted_cache_loads_back_and_bad_ones_are_refused() {
    let e = engine().unwrap();
    // Build at least one pipeline so the cache holds something.
    let x = Tensor::from_bytes(&[4], DType::F32, &[0u8; 16]).unwrap();
    unary(UnaryOp::Negate, &x, DType::F32)
        .unwrap()
        .to_bytes()
        .unwrap();
    let saved = e.kernels.persisted_cache().unwrap();
    assert_eq!(&saved[..8], b"NXVKPC01");
    let n = e
        .kernels
        .load_cache(&saved, e.info())
        .expect("our own cache loads");
    assert_eq!(n, saved.len() - 48);

    assert!(
        refused(b"not a cache at all, but long enough to have a header......")
            .contains("not an Nx.Vulkan")
    );

    let mut damaged = saved.clone();
    *damaged.last_mut().unwrap() ^= 0x5a;
    assert!(refused(&damaged).contains("corrupt"));
    assert!(refused(&saved[..saved.len() - 1]).contains("corrupt"));

    // Another driver's data: the pipeline-cache UUID of its header differs.
    let mut foreign = saved.clone();
    foreign[48 + 16] ^= 0xff;
    reseal(&mut foreign);
    assert!(refused(&foreign).contains("another device or driver"));

    let mut other_vendor = saved.clone();
    other_vendor[48 + 8] ^= 0x01;
    reseal(&mut other_vendor);
    assert!(refused(&other_vendor).contains("another device or driver"));

    // The engine still builds and runs kernels afterwards.
    let y = unary(UnaryOp::Abs, &x, DType::F32).unwrap();
    assert_eq!(y.to_bytes().unwrap(), vec![0u8; 16]);
}
