//! Launch lists replay commands by dependency level (`nx_vulkan::launch_list`): two
//! independent chains recorded one after the other need a barrier per step of one chain,
//! not per op. Alone in its binary, so that no other test's commands share the stream's
//! barrier count.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{unary, UnaryOp};
use nx_vulkan::program::{one, Instr, OpFn, Operand, Program};
use nx_vulkan::{engine, DType, Tensor};

#[test]
fn independent_chains_share_barriers() {
    // The command-by-command replay (a recorded list's barriers are inside its buffer).
    std::env::set_var("NX_VULKAN_RECORDED_LISTS", "0");
    let exp: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32));
    let neg: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Negate, &x[0], DType::F32));
    // exp(exp(exp(a))) then negate(negate(negate(b))): slots 2-4 and 5-7.
    let mut instrs = Vec::new();
    for (i, (f, from)) in [
        (&exp, 0),
        (&exp, 2),
        (&exp, 3),
        (&neg, 1),
        (&neg, 5),
        (&neg, 6),
    ]
    .into_iter()
    .enumerate()
    {
        instrs.push(Instr {
            name: "step".into(),
            run: f.clone(),
            operands: vec![Operand::Slot(from)],
            out: 2 + i,
            results: 1,
        });
    }
    let p = Program::new(2, instrs, vec![Operand::Slot(4), Operand::Slot(7)]).unwrap();
    let mut rng = Rng::new(5);
    let mut barriers = Vec::new();
    for _ in 0..3 {
        let a = upload(&[64], DType::F32, &rng.f32s(64, -1.0, 1.0));
        let b = upload(&[64], DType::F32, &rng.f32s(64, -1.0, 1.0));
        let want_a = (0..3).try_fold(a.clone(), |t, _| unary(UnaryOp::Exp, &t, DType::F32));
        let want_b = (0..3).try_fold(b.clone(), |t, _| unary(UnaryOp::Negate, &t, DType::F32));
        let (want_a, want_b) = (want_a.unwrap(), want_b.unwrap());
        // Settle the uploads and the references first.
        want_b.to_bytes().unwrap();
        let before = engine().unwrap().stream.stats().barriers;
        let out = p.run(vec![Some(a), Some(b)]).unwrap();
        barriers.push(engine().unwrap().stream.stats().barriers - before);
        assert_eq!(out[0].to_bytes().unwrap(), want_a.to_bytes().unwrap());
        assert_eq!(out[1].to_bytes().unwrap(), want_b.to_bytes().unwrap());
    }
    // Op by op (the capturing run): a barrier before each step but the first of each
    // chain; replayed by level: one before each of the two later levels.
    assert_eq!(barriers, [4, 2, 2]);
}
