//! Fused programs against the same ops run one by one on the engine: element-wise
//! programs must match bit for bit (every op rounds as its own kernel does), reductions
//! within a few ulps (only the order of additions can differ), and bad programs must be
//! rejected with an error.

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::fused::{fused, FusedOp, FusedOp::*, FusedProgram};
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::{DType, Error, Tensor};
use BinaryOp as B;
use ReduceOp as R;
use UnaryOp as U;

fn program(dtype: DType, shape: &[usize], row_axes: usize, slots: Vec<FusedOp>) -> FusedProgram {
    FusedProgram {
        dtype,
        shape: shape.to_vec(),
        row_axes,
        slots,
        per_row: false,
    }
}

/// Softmax over the last axis, op by op on the engine (what the unfused backend runs).
fn softmax_ops(x: &Tensor) -> Tensor {
    let t = x.dtype;
    let last = x.shape.len() - 1;
    let m = reduce(ReduceOp::Max, x, Some(&[last]), true, t).unwrap();
    let d = binary(BinaryOp::Subtract, x, &m, &x.shape, t).unwrap();
    let e = unary(UnaryOp::Exp, &d, t).unwrap();
    let s = reduce(ReduceOp::Sum, &e, Some(&[last]), true, t).unwrap();
    binary(BinaryOp::Divide, &e, &s, &x.shape, t).unwrap()
}

fn softmax_program(dtype: DType, shape: &[usize]) -> FusedProgram {
    program(
        dtype,
        shape,
        shape.len() - 1,
        vec![
            Input(0),
            Reduce(R::Max, 0),
            Binary(B::Subtract, 0, 1),
            Unary(U::Exp, 2),
            Reduce(R::Sum, 3),
            Binary(B::Divide, 3, 4),
        ],
    )
}

#[test]
fn elementwise_chain_matches_op_by_op_bit_for_bit() {
    let mut rng = Rng::new(7);
    let shape = [37, 129];
    let xs = rng.f32s(37 * 129, -20.0, 20.0);
    let bias = rng.f32s(129, -3.0, 3.0);
    let x = upload(&shape, DType::F32, &xs);
    let b = upload(&[129], DType::F32, &bias);
    // log(abs(exp(x + b) * 0.5 - x) + 1) / sqrt(max(x, 1))
    let p = program(
        DType::F32,
        &shape,
        1,
        vec![
            Input(0),
            Input(1),
            Binary(B::Add, 0, 1),
            Unary(U::Exp, 2),
            Constant(0.5),
            Binary(B::Multiply, 3, 4),
            Binary(B::Subtract, 5, 0),
            Unary(U::Abs, 6),
            Constant(1.0),
            Binary(B::Add, 7, 8),
            Unary(U::Log, 9),
            Binary(B::Max, 0, 8),
            Unary(U::Sqrt, 11),
            Binary(B::Divide, 10, 12),
        ],
    );
    let got: Vec<f32> = download(&fused(&p, &[&x, &b]).unwrap());

    let f = DType::F32;
    let c = |v: f32| upload(&[], f, &[v]);
    let s = &shape[..];
    let t2 = binary(BinaryOp::Add, &x, &b, s, f).unwrap();
    let t3 = unary(UnaryOp::Exp, &t2, f).unwrap();
    let t5 = binary(BinaryOp::Multiply, &t3, &c(0.5), s, f).unwrap();
    let t6 = binary(BinaryOp::Subtract, &t5, &x, s, f).unwrap();
    let t7 = unary(UnaryOp::Abs, &t6, f).unwrap();
    let t9 = binary(BinaryOp::Add, &t7, &c(1.0), s, f).unwrap();
    let t10 = unary(UnaryOp::Log, &t9, f).unwrap();
    let t11 = binary(BinaryOp::Max, &x, &c(1.0), s, f).unwrap();
    let t12 = unary(UnaryOp::Sqrt, &t11, f).unwrap();
    let want: Vec<f32> = download(&binary(BinaryOp::Divide, &t10, &t12, s, f).unwrap());
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&got), bits(&want));
}

#[test]
fn f64_elementwise_chain_matches_op_by_op_bit_for_bit() {
    let mut rng = Rng::new(8);
    let xs: Vec<f64> = (0..300).map(|_| rng.uniform(-30.0, 30.0)).collect();
    let x = upload(&[300], DType::F64, &xs);
    // exp(-x) - log(abs(x))
    let p = program(
        DType::F64,
        &[300],
        0,
        vec![
            Input(0),
            Unary(U::Negate, 0),
            Unary(U::Exp, 1),
            Unary(U::Abs, 0),
            Unary(U::Log, 3),
            Binary(B::Subtract, 2, 4),
        ],
    );
    let got: Vec<f64> = download(&fused(&p, &[&x]).unwrap());
    let f = DType::F64;
    let n = unary(UnaryOp::Negate, &x, f).unwrap();
    let e = unary(UnaryOp::Exp, &n, f).unwrap();
    let a = unary(UnaryOp::Abs, &x, f).unwrap();
    let l = unary(UnaryOp::Log, &a, f).unwrap();
    let want: Vec<f64> = download(&binary(BinaryOp::Subtract, &e, &l, &[300], f).unwrap());
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g.to_bits(), w.to_bits(), "{g} vs {w}");
    }
}

/// Fused softmax against the unfused ops: the maxima are exact, so only the sums'
/// addition order can differ (a few ulps at most).
fn check_softmax(dtype: DType, shape: &[usize]) {
    let mut rng = Rng::new(shape.iter().product::<usize>() as u64);
    let n: usize = shape.iter().product();
    let xs: Vec<f64> = (0..n).map(|_| rng.uniform(-40.0, 40.0)).collect();
    let (got, want): (Vec<f64>, Vec<f64>) = if dtype == DType::F32 {
        let v: Vec<f32> = xs.iter().map(|&x| x as f32).collect();
        let x = upload(shape, dtype, &v);
        let g: Vec<f32> = download(&fused(&softmax_program(dtype, shape), &[&x]).unwrap());
        let w: Vec<f32> = download(&softmax_ops(&x));
        (
            g.iter().map(|&v| v as f64).collect(),
            w.iter().map(|&v| v as f64).collect(),
        )
    } else {
        let x = upload(shape, dtype, &xs);
        let g = download(&fused(&softmax_program(dtype, shape), &[&x]).unwrap());
        (g, download(&softmax_ops(&x)))
    };
    let eps = if dtype == DType::F32 { 1e-6 } else { 1e-14 };
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(
            (g - w).abs() <= eps * w.abs() + 1e-300,
            "{dtype:?} {shape:?} [{i}]: fused {g} vs {w}"
        );
    }
    // Every row sums to 1.
    let cols = *shape.last().unwrap();
    for row in got.chunks(cols) {
        let s: f64 = row.iter().sum();
        assert!((s - 1.0).abs() < 1e-5, "row sum {s}");
    }
}

/// Rows whose differences from their max reach -110, past f32 exp's underflow: the
/// exps that exp32.glsl's fast path declines (results below 2^-126, near midpoints) go
/// through the double path, and the fused result must still be the op-by-op one to an
/// ulp (only the order of the sum's additions may differ).
#[test]
fn softmax_across_exp_range() {
    let shape = [64, 1000];
    let x = upload(
        &shape,
        DType::F32,
        &Rng::new(32).f32s(64 * 1000, -100.0, 10.0),
    );
    let got: Vec<f32> = download(&fused(&softmax_program(DType::F32, &shape), &[&x]).unwrap());
    let want: Vec<f32> = download(&softmax_ops(&x));
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(ulp_diff(*g, *w) <= 1, "[{i}] fused {g:e} against {w:e}");
    }
}

#[test]
fn softmax_matches_the_unfused_ops() {
    for shape in [&[4, 1000][..], &[3, 5, 7], &[1, 1], &[2, 300], &[64, 16]] {
        check_softmax(DType::F32, shape);
        check_softmax(DType::F64, shape);
    }
    // Rows longer than the shared-memory row cache (4096 f32, 2048 f64) read global
    // memory in every pass.
    check_softmax(DType::F32, &[2, 5000]);
    check_softmax(DType::F64, &[2, 3000]);
    // Thousands of rows, each through the row cache by a workgroup of its own.
    check_softmax(DType::F32, &[2500, 300]);
    check_softmax(DType::F64, &[2100, 37]);
}

/// Softmax keeps exp(x - max) in the shared-memory copy of x's row after the sum's
/// pass (x is not read again); `x * softmax(x)` reads x in the last pass, so there the
/// row must stay x. Both against the unfused ops.
#[test]
fn the_kept_operand_replaces_the_row_only_when_the_row_is_not_read_again() {
    for dtype in [DType::F32, DType::F64] {
        let shape = [3, 1500];
        let xs: Vec<f64> = Rng::new(11)
            .f32s(4500, -30.0, 30.0)
            .into_iter()
            .map(f64::from)
            .collect();
        let x = if dtype == DType::F32 {
            upload(
                &shape,
                dtype,
                &xs.iter().map(|&v| v as f32).collect::<Vec<_>>(),
            )
        } else {
            upload(&shape, dtype, &xs)
        };
        let mut slots = softmax_program(dtype, &shape).slots;
        slots.push(Binary(B::Multiply, 5, 0));
        let p = program(dtype, &shape, 1, slots);
        let got = fused(&p, &[&x]).unwrap();
        let want = binary(BinaryOp::Multiply, &softmax_ops(&x), &x, &shape, dtype).unwrap();
        let (g, w): (Vec<f64>, Vec<f64>) = if dtype == DType::F32 {
            let f = |t: &Tensor| download::<f32>(t).into_iter().map(f64::from).collect();
            (f(&got), f(&want))
        } else {
            (download(&got), download(&want))
        };
        let eps = if dtype == DType::F32 { 1e-6 } else { 1e-14 };
        for (i, (g, w)) in g.iter().zip(&w).enumerate() {
            assert!(
                (g - w).abs() <= eps * w.abs() + 1e-300,
                "{dtype:?} [{i}]: {g} vs {w}"
            );
        }
    }
}

#[test]
fn row_reductions_propagate_nan_and_infinities() {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    let rows: [[f32; 4]; 5] = [
        [1.0, nan, 3.0, 2.0],
        [-inf, -inf, -inf, -inf],
        [inf, 1.0, -inf, 0.0],
        [nan, nan, nan, nan],
        [0.5, -0.25, 8.0, -3.0],
    ];
    let xs: Vec<f32> = rows.iter().flatten().copied().collect();
    let x = upload(&[5, 4], DType::F32, &xs);
    for (r, op) in [
        (R::Max, ReduceOp::Max),
        (R::Min, ReduceOp::Min),
        (R::Sum, ReduceOp::Sum),
    ] {
        let mut p = program(DType::F32, &[5, 4], 1, vec![Input(0), Reduce(r, 0)]);
        p.per_row = true;
        let got: Vec<f32> = download(&fused(&p, &[&x]).unwrap());
        let want: Vec<f32> = download(&reduce(op, &x, Some(&[1]), false, DType::F32).unwrap());
        let same = |a: f32, b: f32| (a.is_nan() && b.is_nan()) || a == b;
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(same(*g, *w), "{r:?} row {i}: fused {g} vs {w}");
        }
    }
}

/// A first reduction over the cached input itself is folded while the row is read into
/// shared memory (the fill's eight-load batches and its remainder): rows of 4096 and
/// 3000 columns, NaN and infinities placed in either part, against the unfused reduce.
#[test]
fn reductions_folded_while_filling_the_row_cache() {
    let nan = f32::NAN;
    let inf = f32::INFINITY;
    for cols in [4096, 3000] {
        let rows = 6;
        let mut xs = Rng::new(cols as u64).f32s(rows * cols, -1e3, 1e3);
        xs[cols + 17] = nan; // row 1: in the first batch
        xs[2 * cols + cols - 5] = nan; // row 2: near the end
        xs[3 * cols + 300] = inf; // row 3: +inf and -inf
        xs[3 * cols + cols - 1] = -inf;
        xs[4 * cols + 2100] = -inf; // row 4: past the first batch
        let x = upload(&[rows, cols], DType::F32, &xs);
        for r in [R::Max, R::Min, R::Sum] {
            let mut p = program(DType::F32, &[rows, cols], 1, vec![Input(0), Reduce(r, 0)]);
            p.per_row = true;
            let got: Vec<f32> = download(&fused(&p, &[&x]).unwrap());
            let want: Vec<f32> = download(&reduce(r, &x, Some(&[1]), false, DType::F32).unwrap());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                // Sums may differ in the order of their additions: an ulp.
                let ok =
                    (g.is_nan() && w.is_nan()) || g == w || (r == R::Sum && ulp_diff(*g, *w) <= 1);
                assert!(ok, "{r:?} over {cols} columns, row {i}: fused {g} vs {w}");
            }
        }
        // And as softmax's max, followed by passes that read the row again.
        check_softmax(DType::F32, &[3, cols]);
    }
}

#[test]
fn per_row_output_and_two_dependent_reductions() {
    // logsumexp (per row) and layer-norm variance (two chained reductions).
    let mut rng = Rng::new(3);
    let shape = [6, 50];
    let xs = rng.f32s(300, -5.0, 5.0);
    let x = upload(&shape, DType::F32, &xs);
    let mut lse = program(
        DType::F32,
        &shape,
        1,
        vec![
            Input(0),
            Reduce(R::Max, 0),
            Binary(B::Subtract, 0, 1),
            Unary(U::Exp, 2),
            Reduce(R::Sum, 3),
            Unary(U::Log, 4),
            Binary(B::Add, 5, 1),
        ],
    );
    lse.per_row = true;
    let got: Vec<f32> = download(&fused(&lse, &[&x]).unwrap());
    assert_eq!(got.len(), 6);
    for (r, row) in xs.chunks(50).enumerate() {
        let m = row.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b as f64));
        let s: f64 = row.iter().map(|&v| (v as f64 - m).exp()).sum();
        let want = s.ln() + m;
        assert!(
            (got[r] as f64 - want).abs() < 1e-5 * want.abs().max(1.0),
            "row {r}: {} vs {want}",
            got[r]
        );
    }

    let var = program(
        DType::F32,
        &shape,
        1,
        vec![
            Input(0),
            Reduce(R::Sum, 0),
            Constant(50.0),
            Binary(B::Divide, 1, 2),
            Binary(B::Subtract, 0, 3),
            Binary(B::Multiply, 4, 4),
            Reduce(R::Sum, 5),
            Binary(B::Divide, 6, 2),
            Binary(B::Subtract, 0, 3),
            Binary(B::Divide, 8, 7),
        ],
    );
    let got: Vec<f32> = download(&fused(&var, &[&x]).unwrap());
    for (r, row) in xs.chunks(50).enumerate() {
        let mean: f64 = row.iter().map(|&v| v as f64).sum::<f64>() / 50.0;
        let v: f64 = row.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / 50.0;
        for (c, &x) in row.iter().enumerate() {
            let want = (x as f64 - mean) / v;
            let g = got[r * 50 + c] as f64;
            assert!(
                (g - want).abs() < 1e-5 * want.abs().max(1.0),
                "[{r}, {c}]: {g} vs {want}"
            );
        }
    }
}

#[test]
fn inputs_broadcast_in_every_layout() {
    // Per-row, per-column, scalar and a broadcast the kernel cannot read in place
    // ([3, 1, 5] into [3, 4, 5] split after axis 1: materialised first).
    let mut rng = Rng::new(11);
    let shape = [3, 4, 5];
    let x = rng.f32s(60, -1.0, 1.0);
    let row = rng.f32s(12, -1.0, 1.0);
    let col = rng.f32s(5, -1.0, 1.0);
    let odd = rng.f32s(15, -1.0, 1.0);
    let f = DType::F32;
    let tx = upload(&shape, f, &x);
    let tr = upload(&[3, 4, 1], f, &row);
    let tc = upload(&[5], f, &col);
    let ts = upload(&[], f, &[2.5f32]);
    let to = upload(&[3, 1, 5], f, &odd);
    let p = program(
        f,
        &shape,
        2,
        vec![
            Input(0),
            Input(1),
            Input(2),
            Input(3),
            Input(4),
            Binary(B::Add, 0, 1),
            Binary(B::Multiply, 5, 2),
            Binary(B::Subtract, 6, 3),
            Binary(B::Add, 7, 4),
        ],
    );
    let got: Vec<f32> = download(&fused(&p, &[&tx, &tr, &tc, &ts, &to]).unwrap());
    for i in 0..3 {
        for j in 0..4 {
            for k in 0..5 {
                let at = (i * 4 + j) * 5 + k;
                let want = ((x[at] + row[i * 4 + j]) * col[k] - 2.5) + odd[i * 5 + k];
                assert_eq!(got[at].to_bits(), want.to_bits(), "[{i}, {j}, {k}]");
            }
        }
    }
}

#[test]
fn bad_programs_are_errors() {
    let x = upload(&[2, 3], DType::F32, &[0f32; 6]);
    let y = upload(&[2, 3], DType::F64, &[0f64; 6]);
    let bad = |p: FusedProgram, inputs: &[&Tensor]| match fused(&p, inputs) {
        Err(Error::InvalidArgument(m)) => m,
        Err(e) => panic!("expected InvalidArgument, got {e:?}"),
        Ok(_) => panic!("accepted {p:?}"),
    };
    let m = bad(
        program(DType::F32, &[2, 3], 1, vec![Input(0), Unary(U::Exp, 1)]),
        &[&x],
    );
    assert!(m.contains("not before it"), "{m}");
    let m = bad(program(DType::F32, &[2, 3], 1, vec![Input(0)]), &[&y]);
    assert!(m.contains("input 0 is f64"), "{m}");
    let m = bad(program(DType::F32, &[3, 2], 1, vec![Input(0)]), &[&x]);
    assert!(m.contains("does not broadcast"), "{m}");
    let m = bad(program(DType::F32, &[2, 3], 1, vec![Input(1)]), &[&x]);
    assert!(m.contains("reads input 1"), "{m}");
    let m = bad(program(DType::S32, &[2, 3], 1, vec![Input(0)]), &[&x]);
    assert!(m.contains("f32 or f64"), "{m}");
    let mut p = program(DType::F32, &[2, 3], 1, vec![Input(0), Unary(U::Exp, 0)]);
    p.per_row = true;
    assert!(bad(p, &[&x]).contains("per row"));
    let empty_rows = upload(&[2, 0], DType::F32, &[0f32; 0]);
    let mut p = program(DType::F32, &[2, 0], 1, vec![Input(0), Unary(U::Exp, 0)]);
    p.per_row = true;
    assert!(bad(p, &[&empty_rows]).contains("no columns"));
    let m = bad(
        program(DType::F32, &[2, 3], 1, vec![Input(0), Unary(U::Sin, 0)]),
        &[&x],
    );
    assert!(m.contains("fused kernels lack"), "{m}");
    let m = bad(
        program(
            DType::F32,
            &[2, 3],
            1,
            vec![Input(0), Reduce(R::Product, 0)],
        ),
        &[&x],
    );
    assert!(m.contains("fused kernels lack"), "{m}");
    let many = vec![Input(0); 33];
    assert!(bad(program(DType::F32, &[2, 3], 1, many), &[&x]).contains("1 to 32 slots"));
}

/// Subnormal operands and results, every element-wise op of a fused program against its
/// own kernel, bit for bit. Drivers that flush f32 subnormals (NVIDIA's) flush them in
/// plain f32 instructions; the fused kernel redoes such ops in double as the unfused
/// kernels do (math.glsl's f32s_add and friends). Lavapipe keeps subnormals either way.
#[test]
fn subnormals_match_the_unfused_ops() {
    let xs: Vec<f32> = vec![3e-40, -1e-40, 7e-41, 2e-40, 1e-45, -6e-39, 1.5e-38, 4e-39];
    let ys: Vec<f32> = vec![2e-40, 5e-41, -7e-41, 1e-39, 2e-45, 5e-39, -1.2e-38, 1e-3];
    let shape = [2, 4];
    let x = upload(&shape, DType::F32, &xs);
    let y = upload(&shape, DType::F32, &ys);
    let f = DType::F32;
    for op in [B::Add, B::Subtract, B::Multiply, B::Divide, B::Max, B::Min] {
        let p = program(f, &shape, 1, vec![Input(0), Input(1), Binary(op, 0, 1)]);
        let got: Vec<f32> = download(&fused(&p, &[&x, &y]).unwrap());
        let want: Vec<f32> = download(&binary(op, &x, &y, &shape, f).unwrap());
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            want.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{op:?}: fused {got:?} vs {want:?}"
        );
    }
    for op in [U::Negate, U::Abs, U::Sqrt] {
        let p = program(f, &shape, 1, vec![Input(0), Unary(op, 0)]);
        let got: Vec<f32> = download(&fused(&p, &[&x]).unwrap());
        let want: Vec<f32> = download(&unary(op, &x, f).unwrap());
        let same = |a: f32, b: f32| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        assert!(
            got.iter().zip(&want).all(|(g, w)| same(*g, *w)),
            "{op:?}: fused {got:?} vs {want:?}"
        );
    }
    // A product of two subnormals' neighbours: 1e-20 * 1e-20 = 1e-40, subnormal result.
    let a = upload(&[1, 2], DType::F32, &[1e-20f32, -3e-20]);
    let p = program(f, &[1, 2], 1, vec![Input(0), Binary(B::Multiply, 0, 0)]);
    let got: Vec<f32> = download(&fused(&p, &[&a]).unwrap());
    let want: Vec<f32> = download(&binary(B::Multiply, &a, &a, &[1, 2], f).unwrap());
    assert_eq!(got, want);
    assert!(got[0] > 0.0, "1e-20 squared flushed to {}", got[0]);
}
