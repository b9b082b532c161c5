#!/usr/bin/env bash
# Runs the whole benchmark set on the device tool's GPU machine, in one call, and leaves
# JSON lines in $OUT (engine.jsonl, elixir.jsonl, torch.jsonl, env.txt).
#
# Built here, carried there: target/release/examples/engine_bench (cargo build --release
# --example engine_bench --no-default-features), priv/native (scripts/build_nif), .gl (the
# Vulkan loader .deb) and .beam/beam.tgz (Debian's OTP 25 + Elixir 1.14 runtime);
# optionally .nxbeam/nx.tgz (a newer Elixir plus compiled Nx and Axon) for axon_bench.exs.
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
[ -f .beam/beam.tgz ] && tar xzf .beam/beam.tgz -C /
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv; uname -a; } > "$OUT/env.txt" 2>&1
# A cold H200 (and its host) ran the first ten seconds of a call at half speed or less
# (raw nvidia-h200-2026-12-01o, -01p): warm both up before anything is timed.
echo "== warm-up"
timeout 60 target/release/examples/engine_bench --only add,matmul,mlp --sizes 4096,4096,4096 > /dev/null 2>&1
echo "== trace"
NX_VULKAN_TRACE=1 timeout 30 target/release/examples/engine_bench --tiny > "$OUT/trace.txt" 2>&1
tail -30 "$OUT/trace.txt"
# Two passes of each side, alternating, so a clock dip in one pass does not decide a
# figure; report.py takes each figure's best pass on both sides.
for pass in 1 2; do
  sfx=$([ "$pass" = 1 ] && echo "" || echo "-$pass")
  echo "== engine (pass $pass)"
  timeout 200 target/release/examples/engine_bench --large | tee "$OUT/engine$sfx.jsonl"
  echo "== elixir (pass $pass)"
  timeout 90 elixir bench/elixir_bench.exs | tee "$OUT/elixir$sfx.jsonl"
  # The Axon figure needs Elixir >= 1.15 with Nx and Axon: carried as .nxbeam/nx.tgz
  # (an Elixir install and compiled Nx/Axon, unpacked to /work/scratch) when available.
  if [ -f .nxbeam/nx.tgz ]; then
    [ -d /work/scratch/elixir ] || { mkdir -p /work/scratch && tar xzf .nxbeam/nx.tgz -C /work/scratch; }
    PATH=/work/scratch/elixir/bin:$PATH ERL_LIBS=/work/scratch/ebin timeout 120 elixir bench/axon_bench.exs \
      | grep '^{' | tee -a "$OUT/elixir$sfx.jsonl"
  fi
  echo "== torch (pass $pass)"
  PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_bench.py --large | tee "$OUT/torch$sfx.jsonl"
done
