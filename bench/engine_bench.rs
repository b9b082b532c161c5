//! Op-level benchmarks of the engine alone (no BEAM). Prints one JSON object per figure.
//!
//!     cargo run --release --example engine_bench -- [--quick] [--large] [--tiny]
//!
//! `--tiny` runs only a few tiny round trips (with `NX_VULKAN_TRACE=1`, to time each submit
//! and wait).
//!
//! Each figure is the median of repeated runs after warm-up. Throughput figures time a
//! burst of launches followed by one synchronisation, so the host wait is amortised.

use nx_vulkan::ops::dot::dot;
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp};
use nx_vulkan::ops::indexing::select;
use nx_vulkan::ops::reduce::{reduce, ReduceOp};
use nx_vulkan::ops::shape::transpose;
use nx_vulkan::{engine, DType, Tensor};
use std::time::Instant;

#[path = "engine_bench/generated.rs"]
mod generated;
#[path = "engine_bench/replay.rs"]
mod replay;
#[path = "engine_bench/softmax.rs"]
mod softmax;
use softmax::{softmax_fused, softmax_parts, softmax_probe, softmax_rows};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn f32_bytes(n: usize, seed: u32) -> Vec<u8> {
    (0..n)
        .map(|i| (((i as u32).wrapping_mul(2654435761) ^ seed) % 1000) as f32 / 1000.0)
        .flat_map(|x| x.to_le_bytes())
        .collect()
}

fn emit(name: &str, size: &str, value: f64, unit: &str, extra: &str) {
    println!("{{\"figure\":\"{name}\",\"size\":\"{size}\",\"value\":{value:.4},\"unit\":\"{unit}\"{extra}}}");
}

fn tiny_roundtrip(iters: usize) {
    let a = f32_bytes(4, 1);
    let b = f32_bytes(4, 2);
    let mut times = Vec::with_capacity(iters);
    for i in 0..iters + iters / 10 {
        let t0 = Instant::now();
        let ta = Tensor::from_bytes(&[4], DType::F32, &a).unwrap();
        let tb = Tensor::from_bytes(&[4], DType::F32, &b).unwrap();
        let tc = binary(BinaryOp::Add, &ta, &tb, &[4], DType::F32).unwrap();
        let out = tc.to_bytes().unwrap();
        let dt = t0.elapsed().as_secs_f64() * 1e6;
        assert_eq!(out.len(), 16);
        if i >= iters / 10 {
            times.push(dt);
        }
    }
    emit(
        "tiny_add_roundtrip",
        "4 x f32",
        median(times),
        "us",
        ",\"what\":\"upload a, upload b, add, download\"",
    );
}

/// Round trips split into phases (uploads, op, download), as medians per bucket of
/// `bucket` iterations: shows where time goes and whether it drifts over a run.
fn tiny_phases(iters: usize, bucket: usize) {
    let a = f32_bytes(4, 1);
    let b = f32_bytes(4, 2);
    let mut rows: Vec<[f64; 3]> = Vec::new();
    for _ in 0..iters {
        let t0 = Instant::now();
        let ta = Tensor::from_bytes(&[4], DType::F32, &a).unwrap();
        let tb = Tensor::from_bytes(&[4], DType::F32, &b).unwrap();
        let t1 = Instant::now();
        let tc = binary(BinaryOp::Add, &ta, &tb, &[4], DType::F32).unwrap();
        let t2 = Instant::now();
        let _ = tc.to_bytes().unwrap();
        let t3 = Instant::now();
        let us = |x: Instant, y: Instant| (y - x).as_secs_f64() * 1e6;
        rows.push([us(t0, t1), us(t1, t2), us(t2, t3)]);
    }
    for (i, chunk) in rows.chunks(bucket).enumerate() {
        let col = |k: usize| median(chunk.iter().map(|r| r[k]).collect());
        println!(
            "{{\"bucket\":{i},\"upload_us\":{:.1},\"op_us\":{:.1},\"download_us\":{:.1}}}",
            col(0),
            col(1),
            col(2)
        );
    }
}

fn op_issue(iters: usize) {
    let e = engine().unwrap();
    let ta = Tensor::from_bytes(&[4], DType::F32, &f32_bytes(4, 1)).unwrap();
    let tb = Tensor::from_bytes(&[4], DType::F32, &f32_bytes(4, 2)).unwrap();
    let mut per_op = Vec::new();
    for _ in 0..7 {
        let t0 = Instant::now();
        for _ in 0..iters {
            let _ = binary(BinaryOp::Add, &ta, &tb, &[4], DType::F32).unwrap();
        }
        let issue = t0.elapsed().as_secs_f64() * 1e6 / iters as f64;
        e.stream.synchronize().unwrap();
        per_op.push(issue);
    }
    emit(
        "op_issue",
        "4 x f32",
        median(per_op),
        "us",
        ",\"what\":\"add on resident tensors, no readback (host time per op)\"",
    );
}

/// Median seconds per launch of `op` (a warm-up launch with a download first, then `reps`
/// bursts of `burst` launches, each burst ended by one synchronisation).
pub(crate) fn burst_seconds(reps: usize, burst: usize, op: &dyn Fn() -> Tensor) -> f64 {
    let e = engine().unwrap();
    let _ = op().to_bytes().unwrap();
    // Untimed bursts for at least 0.3 s on a GPU: it clocks down within milliseconds of
    // idling (allocations, host work) and ramps up slowly; figures taken right after an
    // idle gap were up to 2.5x low. torch_bench.py does the same.
    let t0 = Instant::now();
    while e.info().device_type != "cpu" && t0.elapsed().as_secs_f64() < 0.3 {
        for _ in 0..burst {
            let _ = op();
        }
        e.stream.synchronize().unwrap();
    }
    let mut times = Vec::new();
    for _ in 0..reps {
        let t0 = Instant::now();
        for _ in 0..burst {
            let _ = op();
        }
        e.stream.synchronize().unwrap();
        times.push(t0.elapsed().as_secs_f64() / burst as f64);
    }
    median(times)
}

fn emit_throughput(figure: &str, n: usize, bytes: usize, t: f64) {
    let extra = format!(",\"time_us\":{:.1}", t * 1e6);
    emit(
        figure,
        &format!("{n}"),
        bytes as f64 / t / 1e9,
        "GB/s",
        &extra,
    );
}

fn add_throughput(n: usize, reps: usize, burst: usize) {
    let ta = Tensor::from_bytes(&[n], DType::F32, &f32_bytes(n, 1)).unwrap();
    let tb = Tensor::from_bytes(&[n], DType::F32, &f32_bytes(n, 2)).unwrap();
    let t = burst_seconds(reps, burst, &|| {
        binary(BinaryOp::Add, &ta, &tb, &[n], DType::F32).unwrap()
    });
    emit_throughput("add_f32", n, 3 * n * 4, t);
}

fn sum_throughput(n: usize, reps: usize, burst: usize) {
    let ta = Tensor::from_bytes(&[n], DType::F32, &f32_bytes(n, 1)).unwrap();
    let t = burst_seconds(reps, burst, &|| {
        reduce(ReduceOp::Sum, &ta, None, false, DType::F32).unwrap()
    });
    emit_throughput("sum_f32", n, n * 4, t);
}

fn square(n: usize) -> Tensor {
    Tensor::from_bytes(&[n, n], DType::F32, &f32_bytes(n * n, 3)).unwrap()
}

fn sum_axis0(n: usize, reps: usize, burst: usize) {
    let t = square(n);
    let s = burst_seconds(reps, burst, &|| {
        reduce(ReduceOp::Sum, &t, Some(&[0]), false, DType::F32).unwrap()
    });
    emit_throughput("sum_axis0_f32", n * n, n * n * 4, s);
}

fn transpose_2d(n: usize, reps: usize, burst: usize) {
    let t = square(n);
    let s = burst_seconds(reps, burst, &|| transpose(&t, &[1, 0]).unwrap());
    emit_throughput("transpose_f32", n * n, 2 * n * n * 4, s);
}

/// One SGD step of a 784-128-10 MLP (ReLU, softmax cross-entropy), batch 128, written
/// out as the ops Nx's autodiff would emit (forward, backward, update): ~30 launches.
fn mlp_step(reps: usize) {
    let f = DType::F32;
    let t = |shape: &[usize], seed: u32| {
        let n: usize = shape.iter().product();
        let v: Vec<u8> = f32_bytes(n, seed)
            .chunks(4)
            .flat_map(|c| {
                ((f32::from_le_bytes([c[0], c[1], c[2], c[3]]) - 0.5) * 0.1).to_le_bytes()
            })
            .collect();
        Tensor::from_bytes(shape, f, &v).unwrap()
    };
    let (b, i, h, o) = (128, 784, 128, 10);
    let x = t(&[b, i], 1);
    let y = t(&[b, o], 2);
    let params = std::cell::RefCell::new((t(&[i, h], 3), t(&[h], 4), t(&[h, o], 5), t(&[o], 6)));
    let lr = Tensor::from_bytes(&[], f, &0.01f32.to_le_bytes()).unwrap();
    let zero = Tensor::from_bytes(&[], f, &0f32.to_le_bytes()).unwrap();
    let inv_b = Tensor::from_bytes(&[], f, &(1.0f32 / b as f32).to_le_bytes()).unwrap();
    let add = |a: &Tensor, c: &Tensor, s: &[usize]| binary(BinaryOp::Add, a, c, s, f).unwrap();
    let step = || {
        let (w1, b1, w2, b2) = params.borrow().clone();
        let hid = add(
            &dot(&x, &[1], &[], &w1, &[0], &[], f).unwrap(),
            &b1,
            &[b, h],
        );
        let act = binary(BinaryOp::Max, &hid, &zero, &[b, h], f).unwrap();
        let z = add(
            &dot(&act, &[1], &[], &w2, &[0], &[], f).unwrap(),
            &b2,
            &[b, o],
        );
        let m = reduce(ReduceOp::Max, &z, Some(&[1]), true, f).unwrap();
        let e = unary(
            UnaryOp::Exp,
            &binary(BinaryOp::Subtract, &z, &m, &[b, o], f).unwrap(),
            f,
        )
        .unwrap();
        let sum = reduce(ReduceOp::Sum, &e, Some(&[1]), true, f).unwrap();
        let p = binary(BinaryOp::Divide, &e, &sum, &[b, o], f).unwrap();
        let dz = binary(
            BinaryOp::Multiply,
            &binary(BinaryOp::Subtract, &p, &y, &[b, o], f).unwrap(),
            &inv_b,
            &[b, o],
            f,
        )
        .unwrap();
        let dw2 = dot(&act, &[0], &[], &dz, &[0], &[], f).unwrap();
        let db2 = reduce(ReduceOp::Sum, &dz, Some(&[0]), false, f).unwrap();
        let da = dot(&dz, &[1], &[], &w2, &[1], &[], f).unwrap();
        let pos = binary(BinaryOp::Greater, &hid, &zero, &[b, h], DType::U8).unwrap();
        let dh = select(&pos, &da, &zero, &[b, h], f).unwrap();
        let dw1 = dot(&x, &[0], &[], &dh, &[0], &[], f).unwrap();
        let db1 = reduce(ReduceOp::Sum, &dh, Some(&[0]), false, f).unwrap();
        let upd = |w: &Tensor, g: &Tensor| {
            let s = w.shape.clone();
            binary(
                BinaryOp::Subtract,
                w,
                &binary(BinaryOp::Multiply, g, &lr, &s, f).unwrap(),
                &s,
                f,
            )
            .unwrap()
        };
        *params.borrow_mut() = (
            upd(&w1, &dw1),
            upd(&b1, &db1),
            upd(&w2, &dw2),
            upd(&b2, &db2),
        );
    };
    let e = engine().unwrap();
    step();
    e.stream.synchronize().unwrap();
    let mut times = Vec::new();
    for _ in 0..reps {
        let t0 = Instant::now();
        for _ in 0..10 {
            step();
        }
        e.stream.synchronize().unwrap();
        times.push(t0.elapsed().as_secs_f64() / 10.0);
    }
    emit(
        "mlp_step_f32",
        "784-128-10 b128",
        median(times) * 1e6,
        "us",
        ",\"what\":\"forward, backward and SGD update as primitive ops (no readback)\"",
    );
}

/// The launches of `mlp_step`, each timed alone in bursts of independent launches, and
/// a chain of 30 dependent tiny adds (the cost of a barrier between launches).
fn mlp_parts(reps: usize, burst: usize) {
    let f = DType::F32;
    let t = |shape: &[usize], seed: u32| {
        let n: usize = shape.iter().product();
        Tensor::from_bytes(shape, f, &f32_bytes(n, seed)).unwrap()
    };
    let (b, i, h, o) = (128, 784, 128, 10);
    let (x, w1, act, w2, dz, dh) = (
        t(&[b, i], 1),
        t(&[i, h], 3),
        t(&[b, h], 4),
        t(&[h, o], 5),
        t(&[b, o], 6),
        t(&[b, h], 7),
    );
    let bias = t(&[h], 8);
    let parts: [(&str, &dyn Fn() -> Tensor); 10] = [
        ("transpose_act", &|| transpose(&act, &[1, 0]).unwrap()),
        ("dot_x_w1", &|| {
            dot(&x, &[1], &[], &w1, &[0], &[], f).unwrap()
        }),
        ("dot_act_w2", &|| {
            dot(&act, &[1], &[], &w2, &[0], &[], f).unwrap()
        }),
        ("dot_actT_dz", &|| {
            dot(&act, &[0], &[], &dz, &[0], &[], f).unwrap()
        }),
        ("dot_dz_w2T", &|| {
            dot(&dz, &[1], &[], &w2, &[1], &[], f).unwrap()
        }),
        ("dot_xT_dh", &|| {
            dot(&x, &[0], &[], &dh, &[0], &[], f).unwrap()
        }),
        ("add_bias", &|| {
            binary(BinaryOp::Add, &act, &bias, &[b, h], f).unwrap()
        }),
        ("sum_rows_b_o", &|| {
            reduce(ReduceOp::Sum, &dz, Some(&[1]), true, f).unwrap()
        }),
        ("sum_axis0_b_h", &|| {
            reduce(ReduceOp::Sum, &dh, Some(&[0]), false, f).unwrap()
        }),
        ("chain30_add", &|| {
            let mut acc = binary(BinaryOp::Add, &dz, &dz, &[b, o], f).unwrap();
            for _ in 0..29 {
                acc = binary(BinaryOp::Add, &acc, &dz, &[b, o], f).unwrap();
            }
            acc
        }),
    ];
    for (name, op) in parts {
        let s = burst_seconds(reps, burst, op);
        emit(
            &format!("mlp_part_{name}"),
            "784-128-10 b128",
            s * 1e6,
            "us",
            "",
        );
    }
}

/// An n x n matmul of `ty` operands (f16 and bf16 ones converted from f32 data).
fn matmul(n: usize, reps: usize, burst: usize, ty: DType) {
    matmul_shape([n, n, n], reps, burst, ty);
}

/// An (m x k) by (k x n) matmul of `ty` operands; its size reads `n` when square, else
/// `MxNxK`.
fn matmul_shape([m, n, k]: [usize; 3], reps: usize, burst: usize, ty: DType) {
    let operand = |rows, cols, seed| {
        let bytes = f32_bytes(rows * cols, seed);
        let t = Tensor::from_bytes(&[rows, cols], DType::F32, &bytes).unwrap();
        nx_vulkan::ops::elementwise::as_type(&t, ty).unwrap()
    };
    let (ta, tb) = (operand(m, k, 1), operand(k, n, 2));
    let t = burst_seconds(reps, burst, &|| {
        dot(&ta, &[1], &[], &tb, &[0], &[], ty).unwrap()
    });
    let size = if m == n && n == k {
        format!("{n}")
    } else {
        format!("{m}x{n}x{k}")
    };
    emit(
        &format!("matmul_{}", ty.name()),
        &size,
        2.0 * (m * n * k) as f64 / t / 1e12,
        "TFLOP/s",
        &format!(",\"time_us\":{:.1}", t * 1e6),
    );
}

/// An n x n f32 matmul whose left operand is stored transposed ([K, M], a gradient's
/// `x^T dy`), read in place: beside `matmul_f32` of the same size, what reading A
/// k-major costs sgemm.comp.
fn matmul_kmajor_left(n: usize, reps: usize, burst: usize) {
    let operand = |seed| Tensor::from_bytes(&[n, n], DType::F32, &f32_bytes(n * n, seed)).unwrap();
    let (at, tb) = (operand(1), operand(2));
    let t = burst_seconds(reps, burst, &|| {
        dot(&at, &[0], &[], &tb, &[0], &[], DType::F32).unwrap()
    });
    emit(
        "matmul_f32_kmajor_left",
        &format!("{n}"),
        2.0 * (n * n * n) as f64 / t / 1e12,
        "TFLOP/s",
        &format!(",\"time_us\":{:.1}", t * 1e6),
    );
}

/// Keeps the GPU busy with 4096 matmuls for about a second: an idle H200 sits at 345 MHz
/// and ramps to 1980 MHz under load, so figures taken cold are up to 5x low.
/// torch_bench.py warms up the same way.
fn warm_up() {
    let n = 4096;
    let ta = Tensor::from_bytes(&[n, n], DType::F32, &f32_bytes(n * n, 1)).unwrap();
    let t0 = Instant::now();
    while t0.elapsed().as_secs_f64() < 1.0 {
        let _ = dot(&ta, &[1], &[], &ta, &[0], &[], DType::F32)
            .unwrap()
            .to_bytes()
            .unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let large = args.iter().any(|a| a == "--large");
    let e = engine().unwrap();
    println!(
        "{{\"device\":\"{}\",\"type\":\"{}\",\"driver\":\"{}\",\"f64\":{},\"denorm_preserve_f32\":{}}}",
        e.info().name,
        e.info().device_type,
        e.info().driver,
        e.info().f64,
        e.info().denorm_preserve_f32
    );
    if args.iter().any(|a| a == "--shapes") {
        for shape in &e.info().cooperative_matrix_shapes {
            println!("# {shape}");
        }
    }
    if args.iter().any(|a| a == "--tiny") {
        // For NX_VULKAN_TRACE=1: a few round trips whose submits and waits the trace times.
        tiny_roundtrip(20);
        return;
    }
    if args.iter().any(|a| a == "--tiny-phases") {
        tiny_phases(600, 50);
        return;
    }
    // `--only a,b`: just the figure groups named (tiny, issue, add, sum, sum_axis0,
    // replay, transpose, softmax, softmax_parts, softmax_probe and mlp_parts (not in the default
    // set), mlp, matmul,
    // matmul_f32 (the f32 sizes only)), to compare settings in one device call.
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|v| v.split(',').map(str::to_string).collect());
    let want = |g: &str| match &only {
        Some(o) => o.iter().any(|x| x == g),
        None => g != "softmax_parts" && g != "mlp_parts",
    };
    if !quick {
        warm_up();
    }
    if want("tiny") {
        tiny_roundtrip(if quick { 500 } else { 3000 });
    }
    if want("issue") {
        op_issue(if quick { 2000 } else { 20000 });
    }
    if want("replay") {
        replay::program_replay(if quick { 2000 } else { 20000 });
    }
    // --quick (lavapipe): one timed launch per figure; a GPU run takes the median of 9
    // bursts of 10 launches.
    let (reps, burst) = if quick { (1, 1) } else { (9, 10) };
    // NX_BENCH_BURST: launches per timed burst of the throughput figures (default 10).
    let burst = std::env::var("NX_BENCH_BURST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(burst);
    if want("add") {
        add_throughput(1 << 24, reps, burst);
    }
    // `--only generated`: generated kernels against the static ones (not in the default set).
    if only.is_some() && want("generated") {
        generated::generated(reps, burst);
    }
    // `--only add_sizes`: add throughput from 1M to 256M elements (where the curve bends).
    if only.is_some() && want("add_sizes") {
        for p in 20..=28 {
            add_throughput(1 << p, 5, burst);
        }
    }
    if want("sum") {
        sum_throughput(1 << 24, reps, burst);
    }
    let side = if quick { 1024 } else { 4096 };
    if want("sum_axis0") {
        sum_axis0(side, reps, burst);
    }
    if want("transpose") {
        transpose_2d(side, reps, burst);
    }
    if want("softmax") {
        softmax_rows(side, reps, burst);
        softmax_fused(side, reps, burst);
    }
    if only.is_some() && want("softmax_probe") {
        softmax_probe(side, reps, burst);
    }
    if want("softmax_parts") {
        softmax_parts(side, reps, burst);
    }
    if want("mlp_parts") {
        mlp_parts(reps, burst);
    }
    if want("mlp") {
        mlp_step(if quick { 1 } else { 9 });
    }
    if large && want("add") {
        add_throughput(1 << 28, 5, burst);
    }
    // `--sizes 4096,8192`: the matmul sizes, in this order (repeats allowed).
    let explicit_sizes = args.iter().any(|a| a == "--sizes");
    let sizes: Vec<usize> = match args.iter().position(|a| a == "--sizes") {
        Some(i) => args[i + 1].split(',').map(|x| x.parse().unwrap()).collect(),
        None if quick => vec![256, 1024],
        None => vec![256, 512, 1024, 2048, 4096, 8192],
    };
    // Bursts as PyTorch's side times them (5 bursts of 3 for the largest).
    let reps = |n: usize| match (quick, n >= 4096) {
        (true, _) => (1, 1),
        (false, true) => (5, 3),
        (false, false) => (7, 10),
    };
    for &n in sizes
        .iter()
        .filter(|_| want("matmul") || want("matmul_f32"))
    {
        let (r, b) = reps(n);
        matmul(n, r, b, DType::F32);
    }
    // PyTorch's side runs f16 and bf16 at these sizes (or at every size given).
    for &n in sizes
        .iter()
        .filter(|&&n| want("matmul") && (explicit_sizes || [256, 1024, 4096, 8192].contains(&n)))
    {
        let (r, b) = reps(n);
        matmul(n, r, b, DType::F16);
        matmul(n, r, b, DType::BF16);
    }
    // `--only mm --mm 4096x4224x4096,...` (M x N x K): f32, f16 and bf16 matmuls of those
    // shapes, to tell a tile's rate from how the tiles fill the GPU.
    let shapes: Vec<[usize; 3]> = match args.iter().position(|a| a == "--mm") {
        Some(i) => args[i + 1]
            .split(',')
            .map(|s| {
                let v: Vec<usize> = s.split('x').map(|x| x.parse().unwrap()).collect();
                [v[0], v[1], v[2]]
            })
            .collect(),
        None => Vec::new(),
    };
    // NX_BENCH_MM_BURST: launches per timed burst there (default 3, as PyTorch's side);
    // NX_BENCH_MM_TYPES: which of f32,f16,bf16.
    let mm_burst = std::env::var("NX_BENCH_MM_BURST")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mm_types = std::env::var("NX_BENCH_MM_TYPES").unwrap_or("f32,f16,bf16".into());
    for &shape in shapes.iter().filter(|_| only.is_some() && want("mm")) {
        for ty in [DType::F32, DType::F16, DType::BF16] {
            if mm_types.split(',').any(|t| t == ty.name()) {
                matmul_shape(shape, 5, mm_burst, ty);
            }
        }
    }
    // `--only matmul_t`: f32 products with a k-major left operand, beside plain ones.
    for &n in sizes.iter().filter(|_| only.is_some() && want("matmul_t")) {
        let (r, b) = reps(n);
        matmul(n, r, b, DType::F32);
        matmul_kmajor_left(n, r, b);
    }
    // `--only matmul_f64`: the generic kernel's f64 products (not in the default set).
    for &n in sizes
        .iter()
        .filter(|_| only.is_some() && want("matmul_f64"))
    {
        let (r, b) = reps(n);
        matmul(n, r, b, DType::F64);
    }
}
