set -u
OUT=${OUT:-/tmp/out}
for f in .gl/*.deb; do dpkg -x "$f" /; done; ldconfig
ls /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json >/dev/null 2>&1 || export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
tar xzf .beam/beam.tgz -C /; mkdir -p /work/scratch && tar xzf .nxbeam/nx.tgz -C /work/scratch
export PATH=/work/scratch/elixir/bin:$PATH ERL_LIBS=/work/scratch/ebin
b=target/release/examples/engine_bench
{ nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm --format=csv; lscpu | grep -E "Model name"; } | tee $OUT/env.txt
timeout 60 $b --only add,matmul,mlp --sizes 4096,4096,4096 > /dev/null 2>&1
for e in 1 0 2; do NX_VULKAN_EAGER_SUBMIT=$e timeout 60 $b --only replay,softmax | grep -v device | sed "s/^/eager$e /" | cut -c1-140 | tee -a $OUT/engine.txt; done
for e in 1 2; do echo "axon split eager=$e"; NX_VULKAN_EAGER_SUBMIT=$e timeout 100 elixir -r scripts/load_lib.exs .scratch/issue_prof.exs 2>&1 | grep -v "^\[" | tr '\n' ' ' | sed 's/round/\nround/g' | tee -a $OUT/split.txt; echo; done
p=0; for e in 2 1 2 1; do p=$((p+1)); echo "== axon pass $p eager=$e"; NX_VULKAN_EAGER_SUBMIT=$e timeout 150 elixir bench/axon_bench.exs > $OUT/axon-pass$p-eager$e.log 2>&1; grep '^{' $OUT/axon-pass$p-eager$e.log | grep -v _issue | sed 's/"what".*//' ; grep '_issue' $OUT/axon-pass$p-eager$e.log | sed 's/"what":"[^"]*",//' | cut -c1-200; done
PYTHONUNBUFFERED=1 timeout 120 python3 bench/torch_bench.py --axon | tee $OUT/torch.jsonl
