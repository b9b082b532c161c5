# Where the GPU time of the Compiler's workloads goes: the Axon 784-128-10 training step
# (batch 128) and softmax over the rows of a square f32 matrix, each through
# Nx.Defn.Evaluator (op by op), Nx.Vulkan.Compiler, and the Compiler with fusion off.
# Prints each one's median wall time per call and, when the VM runs with
# NX_VULKAN_PROFILE=1, the GPU time of each kernel per call (Nx.Vulkan.profile/0).
# Needs Nx and Axon on ERL_LIBS (DEVELOPERS.md):
#
#     NX_VULKAN_PROFILE=1 elixir bench/profile_workloads.exs [softmax side, default 4096]
Code.require_file("../scripts/load_lib.exs", __DIR__)

{:ok, _} = Application.ensure_all_started(:axon)
Nx.default_backend(Nx.Vulkan.Backend)
Nx.Vulkan.set_fallback(:raise)

median = fn list -> Enum.at(Enum.sort(list), div(length(list), 2)) end

# Runs `call` (which ends in a host read or a synchronize) `n` times after a warm-up,
# prints the median and, when profiling, the kernels' GPU time per call.
measure = fn label, call ->
  for _ <- 1..20, do: call.()
  Nx.Vulkan.profile()
  times = for _ <- 1..40, do: elem(:timer.tc(call), 0)
  kernels = Nx.Vulkan.profile()
  gpu = kernels |> Enum.map(&elem(&1, 2)) |> Enum.sum()
  IO.puts("\n#{label}: median #{median.(times)} us per call, GPU #{Float.round(gpu / 40, 1)} us per call")

  for {name, count, us} <- Enum.take(kernels, 12) do
    IO.puts("  #{String.pad_trailing(name, 44)} #{count / 40} x  #{Float.round(us / 40, 1)} us")
  end
end

{batch, inputs, hidden, classes} = {128, 784, 128, 10}

model =
  Axon.input("x", shape: {nil, inputs})
  |> Axon.dense(hidden, activation: :relu)
  |> Axon.dense(classes)

{init_fn, predict_fn} = Axon.build(model)
state = init_fn.(Nx.template({batch, inputs}, :f32), Axon.ModelState.empty())
key = Nx.Random.key(42)
{x, key} = Nx.Random.uniform(key, shape: {batch, inputs}, type: :f32)
{labels, _} = Nx.Random.randint(key, 0, classes, shape: {batch}, type: :s32)
y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, classes})) |> Nx.as_type(:f32)

loss = fn data, x, y ->
  logits = predict_fn.(%{state | data: data}, x)
  Axon.Losses.categorical_cross_entropy(y, logits, from_logits: true, reduction: :mean)
end

grad_fun = fn data, x, y -> Nx.Defn.value_and_grad(data, &loss.(&1, x, y)) end

modes = [
  {"Evaluator", [compiler: Nx.Defn.Evaluator]},
  {"Compiler", [compiler: Nx.Vulkan.Compiler]},
  {"Compiler, fuse: false", [compiler: Nx.Vulkan.Compiler, fuse: false]}
]

for {name, opts} <- modes do
  value_and_grad = Nx.Defn.jit(grad_fun, opts)
  data = state.data

  measure.("axon step, #{name}", fn ->
    {l, _grads} = value_and_grad.(data, x, y)
    Nx.to_number(l)
  end)
end

n = String.to_integer(List.first(System.argv()) || "4096")

softmax = fn t ->
  e = Nx.exp(Nx.subtract(t, Nx.reduce_max(t, axes: [1], keep_axes: true)))
  Nx.divide(e, Nx.sum(e, axes: [1], keep_axes: true))
end

{m, _} = Nx.Random.uniform(Nx.Random.key(1), shape: {n, n}, type: :f32)

for {name, opts} <- modes do
  fun = Nx.Defn.jit(softmax, opts)

  measure.("softmax rows #{n}x#{n}, #{name}", fn ->
    fun.(m)
    Nx.Vulkan.synchronize()
  end)
end

IO.inspect(Nx.Vulkan.stats(), label: "\nstats")
