//! Recorded programs (`nx_vulkan::program`): a list of ops over slots replayed on new
//! inputs gives the bytes of the same ops run directly; malformed lists are refused.

mod common;

use common::*;
use nx_vulkan::ops::dot::dot;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::program::{Instr, OpFn, Operand, Program};
use nx_vulkan::{DType, Error, Tensor};
use std::sync::Arc;

fn instr(name: &str, run: OpFn, operands: Vec<Operand>, out: usize) -> Instr {
    Instr {
        name: name.into(),
        run,
        operands,
        out,
    }
}

/// out0 = sum(exp(a) * b + bias, axis 1); out1 = dot(a, b^T); out2 = a (an input).
fn program(bias: Tensor) -> Program {
    let instrs = vec![
        instr(
            "exp",
            Arc::new(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32)),
            vec![Operand::Slot(0)],
            2,
        ),
        instr(
            "multiply",
            Arc::new(|x: &[Tensor]| binary(BinaryOp::Multiply, &x[0], &x[1], &[4, 5], DType::F32)),
            vec![Operand::Slot(2), Operand::Slot(1)],
            3,
        ),
        instr(
            "add",
            Arc::new(|x: &[Tensor]| binary(BinaryOp::Add, &x[0], &x[1], &[4, 5], DType::F32)),
            vec![Operand::Slot(3), Operand::Pinned(bias)],
            4,
        ),
        instr(
            "sum",
            Arc::new(|x: &[Tensor]| reduce(ReduceOp::Sum, &x[0], Some(&[1]), false, DType::F32)),
            vec![Operand::Slot(4)],
            5,
        ),
        instr(
            "dot",
            Arc::new(|x: &[Tensor]| dot(&x[0], &[1], &[], &x[1], &[1], &[], DType::F32)),
            vec![Operand::Slot(0), Operand::Slot(1)],
            6,
        ),
    ];
    Program::new(
        2,
        instrs,
        vec![Operand::Slot(5), Operand::Slot(6), Operand::Slot(0)],
    )
    .unwrap()
}

fn direct(a: &Tensor, b: &Tensor, bias: &Tensor) -> Vec<Vec<u8>> {
    let e = unary(UnaryOp::Exp, a, DType::F32).unwrap();
    let m = binary(BinaryOp::Multiply, &e, b, &[4, 5], DType::F32).unwrap();
    let s = binary(BinaryOp::Add, &m, bias, &[4, 5], DType::F32).unwrap();
    let r = reduce(ReduceOp::Sum, &s, Some(&[1]), false, DType::F32).unwrap();
    let d = dot(a, &[1], &[], b, &[1], &[], DType::F32).unwrap();
    [r, d, a.clone()]
        .iter()
        .map(|t| t.to_bytes().unwrap())
        .collect()
}

#[test]
fn a_program_replays_its_ops_on_new_inputs() {
    let mut rng = Rng::new(41);
    let bias = upload(&[], DType::F32, &[0.5f32]);
    let p = program(bias.clone());
    assert_eq!((p.inputs(), p.len()), (2, 5));
    for _ in 0..3 {
        let a = upload(&[4, 5], DType::F32, &rng.f32s(20, -2.0, 2.0));
        let b = upload(&[4, 5], DType::F32, &rng.f32s(20, -2.0, 2.0));
        let want = direct(&a, &b, &bias);
        let got: Vec<Vec<u8>> = p
            .run(vec![Some(a), Some(b)])
            .unwrap()
            .iter()
            .map(|t| t.to_bytes().unwrap())
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn malformed_programs_and_calls_are_refused() {
    let exp: OpFn = Arc::new(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32));
    // Reads slot 2 before it is written.
    let ahead = Program::new(
        1,
        vec![instr("exp", exp.clone(), vec![Operand::Slot(2)], 1)],
        vec![],
    );
    assert!(matches!(ahead, Err(Error::InvalidArgument(_))));
    // Writes a slot out of order.
    let order = Program::new(
        1,
        vec![instr("exp", exp.clone(), vec![Operand::Slot(0)], 3)],
        vec![],
    );
    assert!(matches!(order, Err(Error::InvalidArgument(_))));
    // An output past the slots.
    let out = Program::new(1, vec![], vec![Operand::Slot(1)]);
    assert!(matches!(out, Err(Error::InvalidArgument(_))));
    let p = Program::new(
        1,
        vec![instr("exp", exp, vec![Operand::Slot(0)], 1)],
        vec![Operand::Slot(1)],
    )
    .unwrap();
    assert!(matches!(p.run(vec![]), Err(Error::InvalidArgument(_))));
    assert!(matches!(p.run(vec![None]), Err(Error::InvalidArgument(_))));
}
