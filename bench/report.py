"""Turns a benchmark run's JSON lines into bench/results/<name>.json and <name>.md.

    python3 bench/report.py <name> <dir with engine.jsonl, elixir.jsonl, peer.jsonl|torch.jsonl>

Ratios are ours / peer for throughput (higher is better) and peer / ours for latency
(so > 1 always means we are faster). The peer ran in the same session on the same machine.
"""
import json
import os
import sys


def load(path):
    rows, meta = [], {}
    if not os.path.exists(path):
        return rows, meta
    for line in open(path):
        line = line.strip()
        if not line.startswith("{"):
            continue
        d = json.loads(line)
        if "figure" in d:
            rows.append(d)
        else:
            meta.update(d)
    return rows, meta


# Figures compared with a peer figure of another name: the same work done another way.
PEER_OF = {
    "softmax_rows_fused_f32": "softmax_rows_f32",
    "softmax_rows_compiler_f32": "softmax_rows_f32",
    "axon_mlp_step_compiler": "axon_mlp_step",
}


def higher_is_better(unit):
    return unit in ("GB/s", "TFLOP/s")


def load_best(folder, stem):
    """<stem>.jsonl plus any <stem>-N.jsonl passes of the same run: each figure's best pass
    (both sides get the same treatment, so a pass that hit a clock dip does not decide)."""
    rows, meta, best = [], {}, {}
    names = sorted(f for f in os.listdir(folder) if f == f"{stem}.jsonl" or (f.startswith(f"{stem}-") and f.endswith(".jsonl")))
    for f in names:
        r, m = load(os.path.join(folder, f))
        meta = meta or m
        for row in r:
            k = (row["figure"], row["size"])
            old = best.get(k)
            if old is None:
                best[k] = row
                rows.append(k)
            elif (row["value"] > old["value"]) == higher_is_better(row["unit"]):
                best[k] = row
    return [best[k] for k in rows], meta, len(names)


def main():
    name, folder = sys.argv[1], sys.argv[2]
    ours, ours_meta, passes = load_best(folder, "engine")
    elixir, _, _ = load_best(folder, "elixir")
    peer_stem = "torch" if os.path.exists(os.path.join(folder, "torch.jsonl")) else "peer"
    peer_file = f"{peer_stem}.jsonl"
    peer, peer_meta, _ = load_best(folder, peer_stem)
    env = open(os.path.join(folder, "env.txt")).read() if os.path.exists(os.path.join(folder, "env.txt")) else ""
    peer_name = "PyTorch " + peer_meta.get("torch", "") if peer_file == "torch.jsonl" else peer_meta.get("peer", "peer")
    key = lambda r: (r["figure"], r["size"])
    peers = {key(r): r for r in peer}
    table = []
    for caller, rows in (("Rust engine", ours), ("Elixir (NIF)", elixir)):
        for r in rows:
            p = peers.get(key(r)) or peers.get((PEER_OF.get(r["figure"]), r["size"]))
            ratio = None
            if p and p["value"]:
                ratio = r["value"] / p["value"] if higher_is_better(r["unit"]) else p["value"] / r["value"]
            table.append({**r, "caller": caller, "peer": p["value"] if p else None, "ratio": ratio})
    ours_keys = {key(r) for r in ours + elixir}
    missing = [r for r in peer if key(r) not in ours_keys]
    for r in missing:
        table.append({**r, "caller": "(not run by us)", "value": None, "peer": r["value"], "ratio": None})
    result = {"device": ours_meta, "peer": peer_name, "env": env, "rows": table}
    os.makedirs("bench/results", exist_ok=True)
    with open(f"bench/results/{name}.json", "w") as f:
        json.dump(result, f, indent=2)
    lines = [
        f"# {name}: {ours_meta.get('device', '?')} ({ours_meta.get('driver', '')})",
        "",
        f"Peer: {peer_name}, same machine, same session. Ratio > 1 means Nx.Vulkan is faster."
        + (f" Each side ran {passes} passes, alternating; each figure is its best pass." if passes > 1 else ""),
        "",
        "| caller | figure | size | Nx.Vulkan | peer | unit | ratio |",
        "|---|---|---|---:|---:|---|---:|",
    ]
    for r in table:
        peer_v = f"{r['peer']:.4g}" if r["peer"] is not None else "–"
        ratio = f"{r['ratio']:.2f}×" if r["ratio"] is not None else "–"
        ours_v = f"{r['value']:.4g}" if r["value"] is not None else "–"
        lines.append(f"| {r['caller']} | {r['figure']} | {r['size']} | {ours_v} | {peer_v} | {r['unit']} | {ratio} |")
    if env:
        lines += ["", "```", env.strip(), "```"]
    with open(f"bench/results/{name}.md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    plot(name, ours, peer, peer_name)


def plot(name, ours, peer, peer_name):
    """bench/results/<name>-matmul.png: TFLOP/s against matrix size, ours and the peer's."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no plot)")
        return
    series = {}
    for who, rows in (("Nx.Vulkan", ours), (peer_name, peer)):
        for r in rows:
            if r["unit"] == "TFLOP/s":
                series.setdefault(f"{who} {r['figure']}", []).append((int(r["size"]), r["value"]))
    if not series:
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for label, pts in sorted(series.items()):
        pts.sort()
        style = "-o" if label.startswith("Nx.Vulkan") else "--s"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("n (n x n @ n x n)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"matmul on {name}")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(f"bench/results/{name}-matmul.png", dpi=110)
    print(f"wrote bench/results/{name}-matmul.png")


if __name__ == "__main__":
    main()
