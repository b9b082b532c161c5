"""The same figures as engine_bench.rs and elixir_bench.exs, in PyTorch on the same GPU.

    python3 bench/torch_bench.py [--large]

Prints one JSON object per figure. TF32 is off (exact f32 matmul, as ours).
"""
import json
import statistics
import sys
import time

import torch

torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
dev = torch.device("cuda")


def emit(figure, size, value, unit, **extra):
    print(json.dumps({"figure": figure, "size": size, "value": round(value, 4), "unit": unit, **extra}), flush=True)


def tiny_roundtrip(iters=3000):
    a = torch.rand(4)
    b = torch.rand(4)
    times = []
    for i in range(iters + iters // 10):
        t0 = time.perf_counter()
        c = (a.to(dev) + b.to(dev)).cpu()
        dt = (time.perf_counter() - t0) * 1e6
        if i >= iters // 10:
            times.append(dt)
    emit("tiny_add_roundtrip", "4 x f32", statistics.median(times), "us", what="upload a, upload b, add, download")


def op_issue(iters=20000):
    a = torch.rand(4, device=dev)
    b = torch.rand(4, device=dev)
    per = []
    for _ in range(7):
        t0 = time.perf_counter()
        for _ in range(iters):
            a + b
        per.append((time.perf_counter() - t0) * 1e6 / iters)
        torch.cuda.synchronize()
    emit("op_issue", "4 x f32", statistics.median(per), "us", what="add on resident tensors, no readback (host time per op)")


def timed_burst(fn, reps, burst):
    # Untimed bursts for at least 0.3 s first: the GPU clocks down within milliseconds of
    # idling (allocations, host work) and takes a while to ramp up (engine_bench does
    # the same).
    t0 = time.perf_counter()
    while True:
        for _ in range(burst):
            fn()
        torch.cuda.synchronize()
        if time.perf_counter() - t0 >= 0.3:
            break
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(burst):
            fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) / burst)
    return statistics.median(times)


def add(n):
    a = torch.rand(n, device=dev)
    b = torch.rand(n, device=dev)
    t = timed_burst(lambda: a + b, 9, 10)
    emit("add_f32", str(n), 3 * n * 4 / t / 1e9, "GB/s", time_us=round(t * 1e6, 1))


def chain10(n):
    """engine_bench's chain10 (bench/engine_bench/generated.rs): 10 element-wise ops with a
    comparison and a select, eager (10 kernels) and through torch.compile (fused)."""
    a = torch.rand(n, device=dev)
    b = torch.rand(n, device=dev)

    def f(a, b):
        t = a * b + a
        u = torch.maximum(t, b) - 0.5
        s = torch.where(u > a, u, t)
        return s.abs() * b - (-a)

    t = timed_burst(lambda: f(a, b), 9, 10)
    emit("chain10_eager", str(n), t * 1e6, "us")
    try:
        compiled = torch.compile(f)
        for _ in range(3):
            compiled(a, b)
        torch.cuda.synchronize()
        t = timed_burst(lambda: compiled(a, b), 9, 10)
        emit("chain10_torch_compile", str(n), t * 1e6, "us")
    except Exception as e:  # no Triton on the machine
        emit("chain10_torch_compile", str(n), 0.0, "us", error=str(e)[:200])


def sum_(n):
    a = torch.rand(n, device=dev)
    t = timed_burst(lambda: a.sum(), 9, 10)
    emit("sum_f32", str(n), n * 4 / t / 1e9, "GB/s", time_us=round(t * 1e6, 1))


def square(n):
    return torch.rand(n, n, device=dev)


def sum_axis0(n):
    a = square(n)
    t = timed_burst(lambda: a.sum(0), 9, 10)
    emit("sum_axis0_f32", str(n * n), n * n * 4 / t / 1e9, "GB/s", time_us=round(t * 1e6, 1))


def transpose(n):
    a = square(n)
    t = timed_burst(lambda: a.t().contiguous(), 9, 10)
    emit("transpose_f32", str(n * n), 2 * n * n * 4 / t / 1e9, "GB/s", time_us=round(t * 1e6, 1))


def softmax_rows(n):
    a = square(n)
    t = timed_burst(lambda: torch.softmax(a, dim=1), 9, 10)
    emit("softmax_rows_f32", str(n * n), t * 1e6, "us", what="torch.softmax(dim=1)")


def mlp_step():
    """The same written-out SGD step as engine_bench's mlp_step (no autograd)."""
    b, i, h, o = 128, 784, 128, 10
    x = torch.rand(b, i, device=dev) - 0.5
    y = torch.rand(b, o, device=dev)
    w1, b1 = (torch.rand(i, h, device=dev) - 0.5) * 0.1, torch.zeros(h, device=dev)
    w2, b2 = (torch.rand(h, o, device=dev) - 0.5) * 0.1, torch.zeros(o, device=dev)
    params = [w1, b1, w2, b2]

    def step():
        w1, b1, w2, b2 = params
        hid = x @ w1 + b1
        act = torch.maximum(hid, torch.zeros((), device=dev))
        z = act @ w2 + b2
        e = torch.exp(z - z.max(dim=1, keepdim=True).values)
        p = e / e.sum(dim=1, keepdim=True)
        dz = (p - y) * (1.0 / b)
        dw2 = act.t() @ dz
        db2 = dz.sum(0)
        da = dz @ w2.t()
        dh = torch.where(hid > 0, da, torch.zeros((), device=dev))
        dw1 = x.t() @ dh
        db1 = dh.sum(0)
        params[:] = [w1 - 0.01 * dw1, b1 - 0.01 * db1, w2 - 0.01 * dw2, b2 - 0.01 * db2]

    t = timed_burst(step, 9, 10)
    emit("mlp_step_f32", "784-128-10 b128", t * 1e6, "us", what="the same ops, no autograd")


def mlp_parts():
    """The peer of engine_bench's mlp_parts: each launch of the MLP step alone."""
    b, i, h, o = 128, 784, 128, 10
    x, w1, act = torch.rand(b, i, device=dev), torch.rand(i, h, device=dev), torch.rand(b, h, device=dev)
    w2, dz, dh = torch.rand(h, o, device=dev), torch.rand(b, o, device=dev), torch.rand(b, h, device=dev)
    bias = torch.rand(h, device=dev)

    def chain():
        acc = dz + dz
        for _ in range(29):
            acc = acc + dz
        return acc

    parts = [
        ("transpose_act", lambda: act.t().contiguous()),
        ("dot_x_w1", lambda: x @ w1),
        ("dot_act_w2", lambda: act @ w2),
        ("dot_actT_dz", lambda: act.t() @ dz),
        ("dot_dz_w2T", lambda: dz @ w2.t()),
        ("dot_xT_dh", lambda: x.t() @ dh),
        ("add_bias", lambda: act + bias),
        ("sum_rows_b_o", lambda: dz.sum(1, keepdim=True)),
        ("sum_axis0_b_h", lambda: dh.sum(0)),
        ("chain30_add", chain),
    ]
    for name, fn in parts:
        t = timed_burst(fn, 9, 10)
        emit("mlp_part_" + name, "784-128-10 b128", t * 1e6, "us")


def axon_mlp_step():
    """The peer of axon_bench.exs: an nn.Module MLP 784-128-10, cross-entropy, autograd,
    an SGD step and the loss read back, batch 128; median of 60 steps after 20."""
    b, i, h, o = 128, 784, 128, 10
    model = torch.nn.Sequential(torch.nn.Linear(i, h), torch.nn.ReLU(), torch.nn.Linear(h, o)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.rand(b, i, device=dev)
    y = torch.randint(0, o, (b,), device=dev)
    lossf = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad()
        loss = lossf(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    for _ in range(20):
        step()
    times = []
    for _ in range(60):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    emit("axon_mlp_step", "784-128-10 b128", statistics.median(times) * 1e6, "us", what="nn.Module, autograd, SGD, loss.item()")


def matmul(n, dtype=torch.float32, figure="matmul_f32"):
    a = torch.rand(n, n, device=dev, dtype=dtype)
    b = torch.rand(n, n, device=dev, dtype=dtype)
    t = timed_burst(lambda: a @ b, 5, 3)
    emit(figure, str(n), 2 * n**3 / t / 1e12, "TFLOP/s", time_us=round(t * 1e6, 1))


def warm_up():
    """Busy the GPU with 4096 matmuls for about a second: an idle H200 clocks down to
    345 MHz (engine_bench warms up the same way)."""
    a = torch.rand(4096, 4096, device=dev)
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 1.0:
        (a @ a).sum().item()


if __name__ == "__main__":
    print(json.dumps({"device": torch.cuda.get_device_name(0), "torch": torch.__version__}), flush=True)
    if "--axon" in sys.argv:
        # The peers of axon_bench.exs alone.
        warm_up()
        axon_mlp_step()
        softmax_rows(4096)
        sys.exit(0)
    if "--chain10" in sys.argv:
        warm_up()
        add(1 << 24)
        chain10(1 << 24)
        sys.exit(0)
    if "--mlp-parts" in sys.argv:
        warm_up()
        mlp_parts()
        sys.exit(0)
    warm_up()
    tiny_roundtrip()
    op_issue()
    add(1 << 24)
    sum_(1 << 24)
    sum_axis0(4096)
    transpose(4096)
    softmax_rows(4096)
    mlp_step()
    axon_mlp_step()
    if "--large" in sys.argv:
        add(1 << 28)
    for n in (256, 512, 1024, 2048, 4096, 8192):
        matmul(n)
    for n in (256, 1024, 4096, 8192):
        matmul(n, torch.float16, "matmul_f16")
        matmul(n, torch.bfloat16, "matmul_bf16")
