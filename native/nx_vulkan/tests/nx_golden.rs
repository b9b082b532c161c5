//! Replays the nx-golden corpus (Nx.Backend calls recorded from real Nx 0.13.1, with
//! Nx.BinaryBackend's results) against the engine.
//!
//!     NX_GOLDEN_DIR=../shared/nx-golden cargo test --release --test nx_golden -- --nocapture
//!
//! Every call of an op the engine implements must reproduce the recorded result:
//! integers and data movement bit for bit, floats within the tolerance of their op class
//! (`golden::Tol`). Calls the engine cannot run (ops without a kernel, types it does not
//! store, f64 transcendental math) are skipped and counted by op. The test ends with
//! `nx-golden: P passed, F failed, U skipped` and fails when F > 0. Every call also runs
//! as a one-instruction recorded program (`nx_vulkan::program`, what Nx.Vulkan.Compiler
//! replays), twice: the second run replays the launch list the first captured, on new
//! buffers, and must give the direct op's bytes.

mod golden;

use golden::{compare, dtype, lo_hi_pairs, scalar, upload, usizes, Arg, Call, Res, Skip, Tol};
use nx_vulkan::ops::conv::{conv, ConvSpec};
use nx_vulkan::ops::elementwise::{as_type, binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::reduce::{argreduce, reduce, ReduceOp};
use nx_vulkan::ops::triangular::{triangular_solve, TransformA, TriangularSolveOpts};
use nx_vulkan::ops::window::{window_reduce, window_scatter, WindowSpec};
use nx_vulkan::ops::{complex, creation, dot, indexing, scatter, shape, sort};
use nx_vulkan::program::{one, Instr, OpFn, Operand, Program};
use nx_vulkan::{DType, Error, Tensor};
use serde_json::Value;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

fn corpus_dir() -> PathBuf {
    match std::env::var("NX_GOLDEN_DIR") {
        Ok(d) => PathBuf::from(d),
        Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/nx-golden"),
    }
}

thread_local! {
    /// Tensors standing in for a call's tensor arguments (by the argument's address)
    /// while it runs as a program's instruction (`as_program`).
    static GIVEN: RefCell<Vec<(usize, Tensor)>> = const { RefCell::new(Vec::new()) };
}

fn tensor_arg(a: &Arg) -> Result<Tensor, Skip> {
    let key = a as *const Arg as usize;
    let given = GIVEN.with(|g| {
        let g = g.borrow();
        g.iter().find(|(k, _)| *k == key).map(|(_, t)| t.clone())
    });
    if let Some(t) = given {
        return Ok(t);
    }
    match a {
        Arg::Tensor(t) => upload(t),
        other => panic!("expected a tensor argument, got {other:?}"),
    }
}

fn value(a: &Arg) -> &Value {
    match a {
        Arg::Value(v) => v,
        other => panic!("expected a value argument, got {other:?}"),
    }
}

fn opts(a: &Arg) -> &serde_json::Map<String, Value> {
    match a {
        Arg::Opts(o) => o,
        other => panic!("expected options, got {other:?}"),
    }
}

fn engine<T>(r: nx_vulkan::Result<T>) -> Result<T, Skip> {
    r.map_err(|e| match e {
        Error::Unsupported(m) => Skip::Unsupported(m),
        other => panic!("engine error: {other}"),
    })
}

/// Start indices: integers, or scalar tensors clamped to [0, dim - len] as Nx does.
fn starts(v: &Value, shape: &[usize], lens: &[usize]) -> Result<Vec<usize>, Skip> {
    let mut out = Vec::new();
    for (i, s) in v.as_array().unwrap().iter().enumerate() {
        let idx: i128 = match s {
            Value::Number(n) => n.as_i64().unwrap() as i128,
            Value::Object(m) => {
                let t: golden::GTensor = serde_json::from_value(m["tensor"].clone()).unwrap();
                let bytes = golden::b64(&t.data);
                let ty = dtype(&t.ty)?;
                let mut buf = [0u8; 16];
                buf[..bytes.len()].copy_from_slice(&bytes);
                if ty.is_signed_int() && bytes[bytes.len() - 1] & 0x80 != 0 {
                    for b in buf.iter_mut().skip(bytes.len()) {
                        *b = 0xff;
                    }
                }
                i128::from_le_bytes(buf)
            }
            _ => panic!("bad start index {s}"),
        };
        out.push(idx.clamp(0, (shape[i] - lens[i]) as i128) as usize);
    }
    Ok(out)
}

/// Runs one call; returns our result and the tolerance class to compare it with.
fn run(c: &Call) -> Result<(Tensor, Tol, usize), Skip> {
    let out_ty = dtype(&c.out.ty)?;
    let out_shape = c.out.shape.clone();
    let a = &c.args;
    let exact = |t| Ok((t, Tol::Exact, 1));
    let op = c.op.as_str();
    if let Some(b) = BinaryOp::from_name(op) {
        let (x, y) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?);
        let t = engine(binary(b, &x, &y, &out_shape, out_ty))?;
        let tol = match b {
            BinaryOp::Pow => Tol::Pow,
            BinaryOp::Atan2 => Tol::Math,
            _ => Tol::Exact,
        };
        return Ok((t, tol, 1));
    }
    if let Some(u) = UnaryOp::from_name(op) {
        let x = tensor_arg(&a[0])?;
        let t = engine(unary(u, &x, out_ty))?;
        let tol = match u {
            UnaryOp::Negate
            | UnaryOp::Abs
            | UnaryOp::Sign
            | UnaryOp::Ceil
            | UnaryOp::Floor
            | UnaryOp::Round
            | UnaryOp::Conjugate
            | UnaryOp::Imag => Tol::Exact,
            UnaryOp::Sqrt if out_ty != DType::F16 => Tol::Exact,
            UnaryOp::ErfInv if out_ty == DType::F64 => Tol::SinglePrecisionReference,
            _ => Tol::Math,
        };
        return Ok((t, tol, 1));
    }
    if let Some(r) = ReduceOp::from_name(op) {
        let x = tensor_arg(&a[0])?;
        let o = opts(&a[1]);
        let axes = o.get("axes").filter(|v| !v.is_null()).map(usizes);
        let keep = o.get("keep_axes").and_then(Value::as_bool).unwrap_or(false);
        let k = x.numel() / out_shape.iter().product::<usize>().max(1);
        let t = engine(reduce(r, &x, axes.as_deref(), keep, out_ty))?;
        return Ok((
            t,
            if matches!(r, ReduceOp::Sum | ReduceOp::Product) {
                Tol::Accum
            } else {
                Tol::Exact
            },
            k,
        ));
    }
    match op {
        "constant" => exact(engine(creation::constant(
            &out_shape,
            out_ty,
            match &a[0] {
                Arg::Number(v) => scalar(v)?,
                _ => return Err(Skip::Unsupported("constant".into())),
            },
        ))?),
        "from_binary" => match &a[0] {
            Arg::Bytes(b) => exact(engine(Tensor::from_binary(
                &out_shape,
                out_ty,
                &golden::b64(b),
            ))?),
            _ => unreachable!(),
        },
        "eye" => exact(engine(creation::eye(&out_shape, out_ty))?),
        "iota" => exact(engine(creation::iota(
            &out_shape,
            out_ty,
            value(&a[0]).as_u64().map(|x| x as usize),
        ))?),
        "as_type" => exact(engine(as_type(&tensor_arg(&a[0])?, out_ty))?),
        "bitcast" => exact(engine(shape::bitcast(&tensor_arg(&a[0])?, out_ty))?),
        "reshape" => exact(engine(shape::reshape(&tensor_arg(&a[0])?, &out_shape))?),
        "squeeze" => exact(engine(shape::squeeze(
            &tensor_arg(&a[0])?,
            &usizes(value(&a[1])),
        ))?),
        "broadcast" => exact(engine(shape::broadcast(
            &tensor_arg(&a[0])?,
            &usizes(value(&a[1])),
            &usizes(value(&a[2])),
        ))?),
        "transpose" => exact(engine(shape::transpose(
            &tensor_arg(&a[0])?,
            &usizes(value(&a[1])),
        ))?),
        "reverse" => exact(engine(shape::reverse(
            &tensor_arg(&a[0])?,
            &usizes(value(&a[1])),
        ))?),
        "pad" => {
            let cfg: Vec<(isize, isize, usize)> = value(&a[2])
                .as_array()
                .unwrap()
                .iter()
                .map(|e| {
                    let e = e.as_array().unwrap();
                    (
                        e[0].as_i64().unwrap() as isize,
                        e[1].as_i64().unwrap() as isize,
                        e[2].as_u64().unwrap() as usize,
                    )
                })
                .collect();
            exact(engine(shape::pad(
                &tensor_arg(&a[0])?,
                &tensor_arg(&a[1])?,
                &cfg,
                out_ty,
            ))?)
        }
        "slice" => {
            let x = tensor_arg(&a[0])?;
            let lens = usizes(value(&a[2]));
            let st = starts(value(&a[1]), &x.shape, &lens)?;
            exact(engine(shape::slice(&x, &st, &lens, &usizes(value(&a[3]))))?)
        }
        "put_slice" => {
            let x = tensor_arg(&a[0])?;
            let upd = tensor_arg(&a[2])?;
            let st = starts(value(&a[1]), &x.shape, &upd.shape)?;
            exact(engine(shape::put_slice(&x, &st, &upd, out_ty))?)
        }
        "concatenate" | "stack" => {
            let ts = match &a[0] {
                Arg::Tensors(ts) => ts.iter().map(upload).collect::<Result<Vec<_>, _>>()?,
                _ => unreachable!(),
            };
            let axis = value(&a[1]).as_u64().unwrap() as usize;
            if op == "stack" {
                exact(engine(shape::stack(&ts, axis, out_ty))?)
            } else {
                exact(engine(shape::concatenate(&ts, axis, out_ty))?)
            }
        }
        "argmax" | "argmin" => {
            let x = tensor_arg(&a[0])?;
            let o = opts(&a[1]);
            let axis = o.get("axis").and_then(Value::as_u64).map(|v| v as usize);
            let keep = o.get("keep_axis").and_then(Value::as_bool).unwrap_or(false);
            let high = o.get("tie_break").and_then(Value::as_str) == Some("high");
            exact(engine(argreduce(
                &x,
                axis,
                keep,
                op == "argmin",
                high,
                out_ty,
            ))?)
        }
        "dot" => {
            let (x, y) = (tensor_arg(&a[0])?, tensor_arg(&a[3])?);
            let (ca, ba, cb, bb) = (
                usizes(value(&a[1])),
                usizes(value(&a[2])),
                usizes(value(&a[4])),
                usizes(value(&a[5])),
            );
            let k: usize = ca.iter().map(|&i| x.shape[i]).product();
            let t = engine(dot::dot(&x, &ca, &ba, &y, &cb, &bb, out_ty))?;
            Ok((
                t,
                if out_ty.is_float() {
                    Tol::Accum
                } else {
                    Tol::Exact
                },
                k,
            ))
        }
        "select" => {
            let (p, x, y) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?, tensor_arg(&a[2])?);
            exact(engine(indexing::select(&p, &x, &y, &out_shape, out_ty))?)
        }
        "clip" => {
            let (x, lo, hi) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?, tensor_arg(&a[2])?);
            exact(engine(indexing::clip(&x, &lo, &hi, out_ty))?)
        }
        "gather" => {
            let (x, idx) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?);
            let axes = usizes(&opts(&a[2])["axes"]);
            exact(engine(indexing::gather(&x, &idx, &axes))?)
        }
        "indexed_put" | "indexed_add" => {
            let (x, idx, upd) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?, tensor_arg(&a[2])?);
            let axes = usizes(&opts(&a[3])["axes"]);
            if op == "indexed_put" {
                exact(engine(scatter::indexed_put(&x, &idx, &upd, &axes, out_ty))?)
            } else {
                let t = engine(scatter::indexed_add(&x, &idx, &upd, &axes, out_ty))?;
                Ok((
                    t,
                    if out_ty.is_float() {
                        Tol::Accum
                    } else {
                        Tol::Exact
                    },
                    idx.shape[0].max(1),
                ))
            }
        }
        "sort" | "argsort" => {
            let x = tensor_arg(&a[0])?;
            let o = opts(&a[1]);
            let axis = o["axis"].as_u64().unwrap() as usize;
            let desc = o["direction"].as_str() == Some("desc");
            if op == "sort" {
                exact(engine(sort::sort(&x, axis, desc))?)
            } else {
                exact(engine(sort::argsort(&x, axis, desc, out_ty))?)
            }
        }
        "window_sum" | "window_product" | "window_max" | "window_min" => {
            let x = tensor_arg(&a[0])?;
            let o = opts(&a[2]);
            let rank = x.shape.len();
            let spec = WindowSpec {
                dims: usizes(value(&a[1])),
                strides: o.get("strides").map_or(vec![1; rank], usizes),
                padding: o.get("padding").map_or(vec![(0, 0); rank], lo_hi_pairs),
                dilations: o.get("window_dilations").map_or(vec![1; rank], usizes),
            };
            let (r, tol) = match op {
                "window_sum" => (ReduceOp::Sum, Tol::Accum),
                "window_product" => (ReduceOp::Product, Tol::Accum),
                "window_max" => (ReduceOp::Max, Tol::Exact),
                _ => (ReduceOp::Min, Tol::Exact),
            };
            let k = spec.dims.iter().product::<usize>().max(1);
            Ok((engine(window_reduce(r, &x, &spec, out_ty))?, tol, k))
        }
        "window_scatter_max" | "window_scatter_min" => {
            let (x, src, init) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?, tensor_arg(&a[2])?);
            let o = opts(&a[4]);
            let padding: Vec<(isize, isize)> = lo_hi_pairs(&o["padding"]);
            let t = window_scatter(
                op == "window_scatter_min",
                &x,
                &src,
                &init,
                &usizes(value(&a[3])),
                &usizes(&o["strides"]),
                &padding,
                out_ty,
            );
            Ok((engine(t)?, Tol::Accum, src.numel().max(1)))
        }
        "triangular_solve" => {
            let (x, y) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?);
            let o = opts(&a[2]);
            let transform_a = match o["transform_a"].as_str() {
                Some("transpose") => TransformA::Transpose,
                Some("conjugate") => TransformA::Conjugate,
                _ => TransformA::None,
            };
            let opts = TriangularSolveOpts {
                left_side: o["left_side"].as_bool().unwrap_or(true),
                lower: o["lower"].as_bool().unwrap_or(true),
                transform_a,
            };
            let n = x.shape.last().copied().unwrap_or(1);
            let t = engine(triangular_solve(&x, &y, opts, out_ty))?;
            Ok((t, Tol::Accum, n))
        }
        "conv" => {
            let (x, w) = (tensor_arg(&a[0])?, tensor_arg(&a[1])?);
            let o = opts(&a[2]);
            let spec = ConvSpec {
                strides: usizes(&o["strides"]),
                padding: lo_hi_pairs(&o["padding"]),
                input_dilation: usizes(&o["input_dilation"]),
                kernel_dilation: usizes(&o["kernel_dilation"]),
                feature_groups: o["feature_group_size"].as_u64().unwrap() as usize,
                batch_groups: o["batch_group_size"].as_u64().unwrap() as usize,
                input_permutation: usizes(&o["input_permutation"]),
                kernel_permutation: usizes(&o["kernel_permutation"]),
                output_permutation: usizes(&o["output_permutation"]),
            };
            let k = w.numel() / w.shape.first().copied().unwrap_or(1).max(1);
            Ok((engine(conv(&x, &w, &spec, out_ty))?, Tol::Accum, k.max(1)))
        }
        "fft" | "ifft" => {
            let x = tensor_arg(&a[0])?;
            let o = opts(&a[1]);
            let n = o["length"].as_u64().unwrap() as usize;
            let axis = o["axis"].as_u64().unwrap() as usize;
            let eps = o["eps"].as_f64().unwrap_or(0.0);
            let t = complex::fft(&x, n, axis, eps, op == "ifft", out_ty);
            Ok((engine(t)?, Tol::Accum, n))
        }
        other => Err(Skip::Unsupported(format!("op {other}"))),
    }
}

/// The call run as a one-instruction recorded program over its tensor arguments, twice,
/// on new uploads each time: the first run captures the launches (a launch list), the
/// second replays them on the new buffers. The second run's result, and whether it
/// replayed a list (a call that copies buffers or binds descriptor sets runs op by op).
fn as_program(c: &Call) -> Result<(Tensor, bool), Skip> {
    let slots: Vec<usize> = (0..c.args.len())
        .filter(|&i| matches!(c.args[i], Arg::Tensor(_)))
        .collect();
    let call = Arc::new(c.clone());
    let args = slots.clone();
    let op: OpFn = one(move |x: &[Tensor]| {
        let given = args
            .iter()
            .zip(x)
            .map(|(&i, t)| (&call.args[i] as *const Arg as usize, t.clone()))
            .collect();
        GIVEN.with(|g| *g.borrow_mut() = given);
        let r = run(&call);
        GIVEN.with(|g| g.borrow_mut().clear());
        r.map(|(t, _, _)| t)
            .map_err(|Skip::Unsupported(m)| Error::Unsupported(m))
    });
    let n = slots.len();
    let instr = Instr {
        name: c.op.clone(),
        run: op,
        operands: (0..n).map(Operand::Slot).collect(),
        out: n,
        results: 1,
    };
    let program = Program::new(n, vec![instr], vec![Operand::Slot(n)]).expect("program");
    let inputs = || {
        slots
            .iter()
            .map(|&i| tensor_arg(&c.args[i]).map(Some))
            .collect::<Result<Vec<_>, Skip>>()
    };
    engine(program.run(inputs()?))?;
    let out = engine(program.run(inputs()?))?.remove(0);
    Ok((out, program.launch_list().is_some()))
}

#[test]
fn nx_golden() {
    let dir = corpus_dir();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "cannot read the corpus at {} (set NX_GOLDEN_DIR): {e}",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let (mut passed, mut failed, mut skipped, mut programs, mut lists) = (0usize, 0, 0, 0, 0);
    let mut skipped_by: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures: Vec<String> = Vec::new();
    for f in &files {
        for line in std::fs::read_to_string(f).unwrap().lines() {
            let c: Call = serde_json::from_str(line).expect("corpus line");
            let want = match &c.result {
                Res::Tensor(t) => t.clone(),
                Res::Tensors(_) => {
                    skipped += 1;
                    *skipped_by
                        .entry(format!("{} (list result)", c.op))
                        .or_default() += 1;
                    continue;
                }
            };
            match run(&c) {
                Err(Skip::Unsupported(why)) => {
                    skipped += 1;
                    let key = if why.starts_with("op ") {
                        c.op.clone()
                    } else {
                        format!("{} ({})", c.op, why.chars().take(60).collect::<String>())
                    };
                    *skipped_by.entry(key).or_default() += 1;
                }
                Ok((ours, tol, k)) => {
                    let ty = dtype(&want.ty).ok().unwrap();
                    let bytes = ours.to_binary(None).expect("download");
                    if let Ok((replayed, listed)) = as_program(&c) {
                        programs += 1;
                        lists += listed as usize;
                        if replayed.to_binary(None).expect("download") != bytes {
                            failed += 1;
                            failures.push(format!(
                                "#{} {}: the replayed program's bytes differ",
                                c.id, c.op
                            ));
                        }
                    }
                    let shape_ok = ours.shape == want.shape && ours.dtype == ty;
                    match (
                        shape_ok,
                        compare(&bytes, &golden::b64(&want.data), ty, tol, k),
                    ) {
                        (true, Ok(())) => passed += 1,
                        (false, _) => {
                            failed += 1;
                            failures.push(format!(
                                "#{} {} ({}): shape/type {:?} {} vs {:?} {}",
                                c.id,
                                c.op,
                                c.source,
                                ours.shape,
                                ours.dtype.name(),
                                want.shape,
                                want.ty
                            ));
                        }
                        (true, Err(e)) => {
                            failed += 1;
                            failures.push(format!("#{} {} ({}): {e}", c.id, c.op, c.source));
                        }
                    }
                }
            }
        }
    }
    for f in failures.iter().take(60) {
        println!("FAIL {f}");
    }
    println!("skipped calls by op: {skipped_by:?}");
    println!(
        "nx-golden: {passed} passed, {failed} failed, {skipped} skipped; {programs} run again \
         as programs, {lists} of them replaying a launch list"
    );
    assert!(programs > 1000, "only {programs} calls ran as programs");
    assert!(
        lists * 10 > programs * 9,
        "only {lists} of {programs} replayed launch lists"
    );
    assert_eq!(
        failed,
        0,
        "{failed} golden calls gave wrong results (first: {:?})",
        failures.first()
    );
}
