//! `NX_VULKAN_MEMORY_LIMIT` (issue 33, item 5: memory exhaustion): allocating past the
//! engine's limit is an out-of-memory error that names the sizes; the engine recovers,
//! later ops work, and memory returns to its baseline once the tensors are dropped. Alone
//! in its binary: the limit is read when the engine starts.

mod common;

use common::*;
use nx_vulkan::memory::memory_limit;
use nx_vulkan::ops::elementwise::{unary, UnaryOp};
use nx_vulkan::program::{one, Instr, OpFn, Operand, Program};
use nx_vulkan::{engine, DType, Error, Tensor};

#[test]
fn limits_are_read_as_bytes_sizes_or_fractions() {
    let heap = 8 << 30;
    assert_eq!(memory_limit(None, heap).unwrap(), None);
    assert_eq!(memory_limit(Some(""), heap).unwrap(), None);
    assert_eq!(memory_limit(Some("1048576"), heap).unwrap(), Some(1 << 20));
    assert_eq!(memory_limit(Some("512M"), heap).unwrap(), Some(512 << 20));
    assert_eq!(memory_limit(Some("2g"), heap).unwrap(), Some(2 << 30));
    assert_eq!(memory_limit(Some("64K"), heap).unwrap(), Some(64 << 10));
    assert_eq!(memory_limit(Some("0.5"), heap).unwrap(), Some(4 << 30));
    for bad in ["0", "1.5", "-3", "12X", "lots", "0.0"] {
        let e = memory_limit(Some(bad), heap).unwrap_err();
        assert!(
            e.to_string().contains("NX_VULKAN_MEMORY_LIMIT"),
            "{bad}: {e}"
        );
    }
}

#[test]
fn allocating_past_the_limit_is_an_error_and_the_engine_recovers() {
    std::env::set_var("NX_VULKAN_MEMORY_LIMIT", "256M");
    let e = engine().unwrap();
    assert_eq!(e.memory.limit(), Some(256 << 20));
    let base = e.memory.stats().live_bytes;
    // 32 MiB tensors (8M f32) until the limit refuses one.
    let n = 8 << 20;
    let mut held: Vec<Tensor> = Vec::new();
    let err = loop {
        match Tensor::empty(&[n], DType::F32) {
            Ok(t) => held.push(t),
            Err(err) => break err,
        }
        assert!(held.len() < 16, "the limit never refused a buffer");
    };
    assert!(matches!(err, Error::OutOfMemory(_)), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("33554432-byte buffer") && msg.contains("268435456"),
        "{msg}"
    );
    assert!((6..=8).contains(&held.len()), "{} buffers fit", held.len());
    // At the limit, an op that needs a new buffer fails the same way.
    let x = held.pop().unwrap();
    assert!(matches!(
        unary(UnaryOp::Exp, &x, DType::F32),
        Err(Error::OutOfMemory(_))
    ));
    // With room again (one buffer freed), ops work and give the right values.
    drop(held.pop());
    let small = upload(&[4], DType::F32, &[0.0f32, 1.0, 2.0, 3.0]);
    let got: Vec<f32> = download(&unary(UnaryOp::Negate, &small, DType::F32).unwrap());
    assert_eq!(got, [-0.0, -1.0, -2.0, -3.0]);
    drop((held, x, small));
    e.stream.synchronize().unwrap();
    assert_eq!(e.memory.stats().live_bytes, base);
    // And the whole limit can be used again.
    let again: Vec<Tensor> = (0..6)
        .map(|_| Tensor::empty(&[n], DType::F32).unwrap())
        .collect();
    assert_eq!(again.len(), 6);
    drop(again);
    // A program whose first run, capturing its launches, would hold all nine 32 MiB
    // intermediates at once runs op by op instead (a few at a time), without a list.
    let exp: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32));
    let instrs = (0..9)
        .map(|i| Instr {
            name: "exp".into(),
            run: exp.clone(),
            operands: vec![Operand::Slot(i)],
            out: i + 1,
            results: 1,
        })
        .collect();
    let p = Program::new(1, instrs, vec![Operand::Slot(9)]).unwrap();
    let a = upload(&[n], DType::F32, &vec![-30.0f32; n]);
    let out = p.run(vec![Some(a)]).unwrap();
    assert!(p.launch_list().is_none());
    let got: Vec<f32> = download(&out[0]);
    let mut t = upload(&[4], DType::F32, &[-30.0f32; 4]);
    for _ in 0..9 {
        t = unary(UnaryOp::Exp, &t, DType::F32).unwrap();
    }
    assert_eq!(got[0], download::<f32>(&t)[0]);
}
