//! engine_bench's program figures (`--only replay`): the host time to issue one run of a
//! recorded program of small launches (what `Nx.Vulkan.Compiler` replays per call), with
//! its launch list (`NX_VULKAN_LAUNCH_LISTS=0`: op by op).

use super::{emit, median};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::program::{one, Instr, Operand, Program};
use nx_vulkan::{engine, DType, Tensor};
use std::time::Instant;

/// A program of `2 * depth` element-wise ops over two inputs of `shape`: two independent
/// chains (`x = exp(x) * y`, `y = y - x`, ...), as a training step's forward and
/// backward ops interleave; its outputs are both chains' last values.
fn chains(depth: usize, shape: &[usize]) -> Program {
    let f = DType::F32;
    let mut instrs = Vec::new();
    let (mut x, mut y) = (0usize, 1usize);
    for _ in 0..depth {
        let s: Vec<usize> = shape.to_vec();
        let out = 2 + instrs.len();
        instrs.push(Instr {
            name: "exp".into(),
            run: one(move |t: &[Tensor]| unary(UnaryOp::Exp, &t[0], f)),
            operands: vec![Operand::Slot(x)],
            out,
            results: 1,
        });
        let out2 = out + 1;
        instrs.push(Instr {
            name: "multiply".into(),
            run: one(move |t: &[Tensor]| binary(BinaryOp::Multiply, &t[0], &t[1], &s, f)),
            operands: vec![Operand::Slot(out), Operand::Slot(1)],
            out: out2,
            results: 1,
        });
        x = out2;
    }
    // The second chain reads only the second input and its own results.
    for _ in 0..depth / 2 {
        let s: Vec<usize> = shape.to_vec();
        let out = 2 + instrs.len();
        instrs.push(Instr {
            name: "subtract".into(),
            run: one(move |t: &[Tensor]| binary(BinaryOp::Subtract, &t[0], &t[1], &s, f)),
            operands: vec![Operand::Slot(y), Operand::Slot(1)],
            out,
            results: 1,
        });
        y = out;
    }
    Program::new(2, instrs, vec![Operand::Slot(x), Operand::Slot(y)]).expect("a valid program")
}

/// Host time to issue one program run (no wait), the median over `calls` runs in bursts
/// of 10 followed by a wait; and the dispatches per run.
pub fn program_replay(calls: usize) {
    let cols: usize = std::env::var("NX_BENCH_REPLAY_COLS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10);
    let shape = [128, cols];
    let p = chains(15, &shape);
    let bytes: Vec<u8> = (0..128 * cols)
        .flat_map(|i| (i as f32 / 1280.0).to_le_bytes())
        .collect();
    let a = Tensor::from_bytes(&shape, DType::F32, &bytes).unwrap();
    let b = Tensor::from_bytes(&shape, DType::F32, &bytes).unwrap();
    let e = engine().unwrap();
    let run = || p.run(vec![Some(a.clone()), Some(b.clone())]).unwrap();
    for _ in 0..20 {
        run();
    }
    e.stream.synchronize().unwrap();
    let before = e.stream.stats().dispatches;
    let mut times = Vec::with_capacity(calls);
    let mut kept = Vec::with_capacity(10);
    for i in 0..calls {
        let t0 = Instant::now();
        kept.push(run());
        times.push(t0.elapsed().as_secs_f64() * 1e6);
        if i % 10 == 9 {
            e.stream.synchronize().unwrap();
            kept.clear();
        }
    }
    e.stream.synchronize().unwrap();
    let dispatches = (e.stream.stats().dispatches - before) as f64 / calls as f64;
    let listed = p.launch_list().is_some();
    emit(
        "program_replay_issue",
        &format!("{} ops on 128x{cols} f32", p.len()),
        median(times),
        "us",
        &format!(
            ",\"what\":\"host time to issue one run of a recorded program (no wait)\",\
             \"dispatches\":{dispatches:.1},\"launch_list\":{listed}"
        ),
    );
}
