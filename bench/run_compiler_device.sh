#!/usr/bin/env bash
# The Compiler's figures (issues 41 and 42) on the device tool's GPU machine, in one call:
# the engine's replay, softmax, MLP and generated-kernel figures, bench/axon_bench.exs in
# passes that alternate one setting, and PyTorch's Axon-equivalent step, softmax and
# chain10 (eager and torch.compile) beside them. The setting is
# the environment variable PASS_VAR (default NX_VULKAN_LAUNCH_LISTS) set to each value of
# LISTS in turn (default 1 0 1 0); the engine's replay runs once more with it at 0.
# Leaves engine.jsonl, axon-passN-<PASS_VAR>V.log, torch.jsonl and env.txt in $OUT.
#
# Carried as bench/run_device.sh says: target/release/examples/engine_bench (built
# --no-default-features), priv/native, .gl (the Vulkan loader .debs), .beam/beam.tgz and
# .nxbeam/nx.tgz (an Elixir with compiled Nx and Axon).
set -uo pipefail
source "$(dirname "$0")/device_env.sh"
tar xzf .beam/beam.tgz -C /
mkdir -p /work/scratch && tar xzf .nxbeam/nx.tgz -C /work/scratch
export PATH=/work/scratch/elixir/bin:$PATH ERL_LIBS=/work/scratch/ebin
{ nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm --format=csv; uname -a; git log -1 --format=%H; } > "$OUT/env.txt" 2>&1
bench=target/release/examples/engine_bench
echo "== warm-up"
timeout 60 $bench --only add,matmul,mlp --sizes 4096,4096,4096 > /dev/null 2>&1
echo "== engine"
timeout 150 $bench --only replay,softmax,mlp,generated | tee "$OUT/engine.jsonl"
var=${PASS_VAR:-NX_VULKAN_LAUNCH_LISTS}
env "$var=0" timeout 60 $bench --only replay | grep program_replay | tee -a "$OUT/engine.jsonl"
pass=0
for v in ${LISTS:-1 0 1 0}; do
  pass=$((pass + 1))
  log="$OUT/axon-pass$pass-$var$v.log"
  echo "== axon pass $pass, $var=$v"
  env "$var=$v" timeout 150 elixir bench/axon_bench.exs > "$log" 2>&1
  grep '^{' "$log" | cut -c1-160
done
echo "== torch"
PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_bench.py --axon | tee "$OUT/torch.jsonl"
PYTHONUNBUFFERED=1 timeout 150 python3 bench/torch_bench.py --chain10 | tee -a "$OUT/torch.jsonl"
