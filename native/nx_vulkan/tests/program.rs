//! Recorded programs (`nx_vulkan::program`): a list of ops over slots replayed on new
//! inputs gives the bytes of the same ops run directly; malformed lists are refused.

mod common;

use common::*;
use nx_vulkan::launch_list;
use nx_vulkan::ops::creation::{constant, Scalar};
use nx_vulkan::ops::dot::dot;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::ops::sort::sort;
use nx_vulkan::ops::window::{window_reduce, WindowSpec};
use nx_vulkan::program::{one, Instr, OpFn, Operand, Program};
use nx_vulkan::{DType, Error, Tensor};

fn instr(name: &str, run: OpFn, operands: Vec<Operand>, out: usize) -> Instr {
    Instr {
        name: name.into(),
        run,
        operands,
        out,
        results: 1,
    }
}

/// out0 = sum(exp(a) * b + bias, axis 1); out1 = dot(a, b^T); out2 = a (an input).
fn program(bias: Tensor) -> Program {
    let instrs = vec![
        instr(
            "exp",
            one(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32)),
            vec![Operand::Slot(0)],
            2,
        ),
        instr(
            "multiply",
            one(|x: &[Tensor]| binary(BinaryOp::Multiply, &x[0], &x[1], &[4, 5], DType::F32)),
            vec![Operand::Slot(2), Operand::Slot(1)],
            3,
        ),
        instr(
            "add",
            one(|x: &[Tensor]| binary(BinaryOp::Add, &x[0], &x[1], &[4, 5], DType::F32)),
            vec![Operand::Slot(3), Operand::Pinned(bias)],
            4,
        ),
        instr(
            "sum",
            one(|x: &[Tensor]| reduce(ReduceOp::Sum, &x[0], Some(&[1]), false, DType::F32)),
            vec![Operand::Slot(4)],
            5,
        ),
        instr(
            "dot",
            one(|x: &[Tensor]| dot(&x[0], &[1], &[], &x[1], &[1], &[], DType::F32)),
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
    let replays = launch_list::replays();
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
    // The first run captured the launches; the next two replayed them.
    assert!(p.launch_list().is_some_and(|l| !l.is_empty()));
    assert!(launch_list::replays() >= replays + 2);
}

fn window_spec() -> WindowSpec {
    WindowSpec {
        dims: vec![2, 3],
        strides: vec![1, 2],
        padding: vec![(1, 0), (0, 1)],
        dilations: vec![1, 1],
    }
}

/// Ops whose first run writes from the host (a window's geometry table, a small
/// constant), several launches per op (sort), an integer path, and an output that is
/// an input's buffer under another shape.
fn mixed_program() -> Program {
    let scale: OpFn = one(|_: &[Tensor]| constant(&[5, 6], DType::F32, Scalar::Float(0.25)));
    let instrs = vec![
        instr("constant", scale, vec![], 2),
        instr(
            "multiply",
            one(|x: &[Tensor]| binary(BinaryOp::Multiply, &x[0], &x[1], &[5, 6], DType::F32)),
            vec![Operand::Slot(0), Operand::Slot(2)],
            3,
        ),
        instr(
            "window_max",
            one(|x: &[Tensor]| window_reduce(ReduceOp::Max, &x[0], &window_spec(), DType::F32)),
            vec![Operand::Slot(3)],
            4,
        ),
        instr(
            "sort",
            one(|x: &[Tensor]| sort(&x[0], 1, true)),
            vec![Operand::Slot(4)],
            5,
        ),
        instr(
            "add",
            one(|x: &[Tensor]| binary(BinaryOp::Add, &x[0], &x[0], &[7], DType::S64)),
            vec![Operand::Slot(1)],
            6,
        ),
        instr(
            "reshape",
            one(|x: &[Tensor]| x[0].reshape(&[6, 5])),
            vec![Operand::Slot(0)],
            7,
        ),
    ];
    Program::new(
        2,
        instrs,
        vec![Operand::Slot(5), Operand::Slot(6), Operand::Slot(7)],
    )
    .unwrap()
}

#[test]
fn replayed_launch_lists_give_the_ops_bytes() {
    let mut rng = Rng::new(7);
    let p = mixed_program();
    for round in 0..4 {
        let xs = rng.f32s(30, -3.0, 3.0);
        let a = upload(&[5, 6], DType::F32, &xs);
        let ints: Vec<i64> = (0..7).map(|i| i * 1_000_000_007 + round).collect();
        let b = upload(&[7], DType::S64, &ints);
        let c = constant(&[5, 6], DType::F32, Scalar::Float(0.25)).unwrap();
        let m = binary(BinaryOp::Multiply, &a, &c, &[5, 6], DType::F32).unwrap();
        let w = window_reduce(ReduceOp::Max, &m, &window_spec(), DType::F32).unwrap();
        let want = [
            sort(&w, 1, true).unwrap().to_bytes().unwrap(),
            binary(BinaryOp::Add, &b, &b, &[7], DType::S64)
                .unwrap()
                .to_bytes()
                .unwrap(),
            a.to_bytes().unwrap(),
        ];
        let outs = p.run(vec![Some(a.clone()), Some(b)]).unwrap();
        assert_eq!(outs[2].shape, vec![6, 5]);
        assert!(std::sync::Arc::ptr_eq(&outs[2].block, &a.block));
        for (i, (o, w)) in outs.iter().zip(&want).enumerate() {
            assert_eq!(&o.to_bytes().unwrap(), w, "round {round}, output {i}");
        }
        assert!(p.launch_list().is_some(), "round {round}: no launch list");
    }
}

#[test]
fn recorded_lists_keep_each_calls_outputs() {
    // Three calls without a read between them: each executes the list recorded once on
    // the list's own buffers, and copies its outputs out before the next call reuses them.
    let bias = upload(&[5], DType::F32, &[0.5f32, -1.0, 2.0, 0.0, 3.0]);
    let p = program(bias.clone());
    let mut rng = Rng::new(11);
    let before = launch_list::recorded_runs();
    let calls: Vec<(Tensor, Tensor)> = (0..4)
        .map(|_| {
            let a = upload(&[4, 5], DType::F32, &rng.f32s(20, -2.0, 2.0));
            let b = upload(&[4, 5], DType::F32, &rng.f32s(20, -2.0, 2.0));
            (a, b)
        })
        .collect();
    let outs: Vec<Vec<Tensor>> = calls
        .iter()
        .map(|(a, b)| p.run(vec![Some(a.clone()), Some(b.clone())]).unwrap())
        .collect();
    for ((a, b), got) in calls.iter().zip(&outs) {
        let want = direct(a, b, &bias);
        let got: Vec<Vec<u8>> = got.iter().map(|t| t.to_bytes().unwrap()).collect();
        assert_eq!(got, want);
    }
    // The first call captures; the others execute the recorded list.
    assert!(launch_list::recorded_runs() >= before + 3);
}

#[test]
fn inputs_of_another_signature_run_op_by_op() {
    let exp: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32));
    let p = Program::new(
        1,
        vec![instr("exp", exp, vec![Operand::Slot(0)], 1)],
        vec![Operand::Slot(1)],
    )
    .unwrap();
    // Integers the host wrote carry their magnitude, which picks the kernel's path: a
    // list captured on small values does not fit large ones.
    let small = upload(&[3], DType::S32, &[1i32, 2, 3]);
    let large = upload(&[3], DType::S32, &[1i32 << 30, -7, 3]);
    let first = p.run(vec![Some(small.clone())]).unwrap();
    let list = p.launch_list().expect("a list");
    assert!(list.fits(&[Some(small)]));
    assert!(!list.fits(&[Some(large.clone())]));
    let want = unary(UnaryOp::Exp, &large, DType::F32).unwrap();
    let got = p.run(vec![Some(large)]).unwrap();
    assert_eq!(got[0].to_bytes().unwrap(), want.to_bytes().unwrap());
    assert_eq!(first[0].shape, vec![3]);
}

#[test]
fn large_intermediates_share_buffers_once_done() {
    // exp, exp, negate on 16 MiB: the third result may take the first's buffer (the
    // stream orders its writes after the second launch's reads), the second may not.
    let op = |u: UnaryOp| -> OpFn { one(move |x: &[Tensor]| unary(u, &x[0], DType::F32)) };
    let p = Program::new(
        1,
        vec![
            instr("exp", op(UnaryOp::Exp), vec![Operand::Slot(0)], 1),
            instr("exp", op(UnaryOp::Exp), vec![Operand::Slot(1)], 2),
            instr("negate", op(UnaryOp::Negate), vec![Operand::Slot(2)], 3),
        ],
        vec![Operand::Slot(3)],
    )
    .unwrap();
    let n = 4 << 20;
    let mut rng = Rng::new(3);
    for _ in 0..2 {
        let a = upload(&[n], DType::F32, &rng.f32s(n, -1.0, 1.0));
        let e1 = unary(UnaryOp::Exp, &a, DType::F32).unwrap();
        let e2 = unary(UnaryOp::Exp, &e1, DType::F32).unwrap();
        let want = unary(UnaryOp::Negate, &e2, DType::F32).unwrap();
        let got = p.run(vec![Some(a)]).unwrap();
        assert_eq!(got[0].to_bytes().unwrap(), want.to_bytes().unwrap());
    }
    assert_eq!(p.launch_list().expect("a list").buffers(), 2);
}

#[test]
fn a_constant_passed_as_an_argument_gets_no_list() {
    // out = x * w with w held by the program; the first call passes w itself as x.
    let w = upload(&[3], DType::F32, &[2.0f32, 3.0, 4.0]);
    let mul: OpFn = one(|x: &[Tensor]| binary(BinaryOp::Multiply, &x[0], &x[1], &[3], DType::F32));
    let p = Program::new(
        1,
        vec![instr(
            "multiply",
            mul,
            vec![Operand::Slot(0), Operand::Pinned(w.clone())],
            1,
        )],
        vec![Operand::Slot(1)],
    )
    .unwrap();
    let first: Vec<f32> = download(&p.run(vec![Some(w.clone())]).unwrap()[0]);
    assert_eq!(first, [4.0, 9.0, 16.0]);
    assert!(p.launch_list().is_none());
    let y = upload(&[3], DType::F32, &[1.0f32, 1.0, 1.0]);
    let got: Vec<f32> = download(&p.run(vec![Some(y)]).unwrap()[0]);
    assert_eq!(got, [2.0, 3.0, 4.0]);
}

#[test]
fn an_op_that_reads_data_on_the_host_gets_no_list() {
    // An op that decides from its input's values (as triangular_solve's singularity check
    // does) must run again on every call.
    let check: OpFn = one(|x: &[Tensor]| {
        let first: Vec<f32> = download(&x[0]);
        if first[0] == 0.0 {
            Err(Error::InvalidArgument("leading zero".into()))
        } else {
            unary(UnaryOp::Negate, &x[0], DType::F32)
        }
    });
    let p = Program::new(
        1,
        vec![instr("check", check, vec![Operand::Slot(0)], 1)],
        vec![Operand::Slot(1)],
    )
    .unwrap();
    let ok = upload(&[2], DType::F32, &[1.0f32, 2.0]);
    assert_eq!(
        download::<f32>(&p.run(vec![Some(ok)]).unwrap()[0]),
        [-1.0, -2.0]
    );
    assert!(p.launch_list().is_none());
    let bad = upload(&[2], DType::F32, &[0.0f32, 2.0]);
    assert!(matches!(
        p.run(vec![Some(bad)]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn malformed_programs_and_calls_are_refused() {
    let exp: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Exp, &x[0], DType::F32));
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

/// An instruction with two results (a generated kernel storing two of its values) takes
/// two slots; later instructions and outputs read either, op by op and from the list.
#[test]
fn an_instruction_with_two_results() {
    use nx_vulkan::codegen::{self, Group, Node, View};
    let f = DType::F32;
    let group = Group {
        reduce_axes: vec![],
        shape: vec![6],
        inputs: vec![View {
            dtype: f,
            strides: vec![1],
            offset: 0,
        }],
        nodes: vec![
            Node::Input(0),
            Node::Binary(BinaryOp::Add, 0, 0, f),
            Node::Unary(UnaryOp::Negate, 1, f),
        ],
        outputs: vec![1, 2],
    };
    let both: OpFn = std::sync::Arc::new(move |x: &[Tensor]| codegen::run(&group, &[&x[0]]));
    let neg: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Negate, &x[0], DType::F32));
    let p = Program::new(
        1,
        vec![
            Instr {
                name: "generated".into(),
                run: both,
                operands: vec![Operand::Slot(0)],
                out: 1,
                results: 2,
            },
            instr("negate", neg, vec![Operand::Slot(2)], 3),
        ],
        vec![Operand::Slot(1), Operand::Slot(3), Operand::Slot(2)],
    )
    .unwrap();
    let mut rng = Rng::new(8);
    for _ in 0..3 {
        let v = rng.f32s(6, -4.0, 4.0);
        let out = p.run(vec![Some(upload(&[6], f, &v))]).unwrap();
        let twice: Vec<f32> = v.iter().map(|x| x + x).collect();
        let minus: Vec<f32> = twice.iter().map(|x| -x).collect();
        assert_eq!(download::<f32>(&out[0]), twice);
        assert_eq!(download::<f32>(&out[1]), twice);
        assert_eq!(download::<f32>(&out[2]), minus);
    }
    assert!(p.launch_list().is_some());
    // A result count other than the instruction's is an error, not a wrong slot.
    let one_of_two: OpFn = one(|x: &[Tensor]| unary(UnaryOp::Negate, &x[0], DType::F32));
    let wrong = Program::new(
        1,
        vec![Instr {
            name: "negate".into(),
            run: one_of_two,
            operands: vec![Operand::Slot(0)],
            out: 1,
            results: 2,
        }],
        vec![Operand::Slot(2)],
    )
    .unwrap();
    assert!(wrong.run(vec![Some(upload(&[1], f, &[1.0f32]))]).is_err());
}
