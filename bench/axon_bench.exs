# One SGD training step of an Axon MLP 784-128-10 (ReLU, softmax cross-entropy), batch 128,
# on Nx.Vulkan.Backend with every op on the GPU (host fallback raising): the forward pass,
# the gradient through Nx.Defn's autodiff (default Evaluator compiler) and the update.
# Needs Nx and Axon on ERL_LIBS (DEVELOPERS.md); prints one JSON line:
#
#     elixir bench/axon_bench.exs
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))

{:ok, _, _} =
  Path.wildcard(Path.join(root, "lib/**/*.ex"))
  |> Kernel.--([Path.join(root, "lib/nx_vulkan/native_path.ex")])
  |> Kernel.ParallelCompiler.require()

{:ok, _} = Application.ensure_all_started(:axon)
Nx.default_backend(Nx.Vulkan.Backend)
Nx.Vulkan.set_fallback(:raise)

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

# x and y are arguments (not closures), so the grad traces them as inputs.
value_and_grad = Nx.Defn.jit(fn data, x, y -> Nx.Defn.value_and_grad(data, &loss.(&1, x, y)) end)

step = fn data ->
  {l, grads} = value_and_grad.(data, x, y)

  data =
    Map.new(data, fn {layer, ps} ->
      {layer, Map.new(ps, fn {k, v} -> {k, Nx.subtract(v, Nx.multiply(grads[layer][k], 0.01))} end)}
    end)

  {l, data}
end

# Warm-up (pipelines, pool), then timed steps; each step reads its loss (a host wait).
data =
  Enum.reduce(1..20, state.data, fn _, d ->
    {l, d} = step.(d)
    Nx.to_number(l)
    d
  end)

{times, _} =
  Enum.map_reduce(1..60, data, fn _, d ->
    t0 = System.monotonic_time(:microsecond)
    {l, d} = step.(d)
    Nx.to_number(l)
    {System.monotonic_time(:microsecond) - t0, d}
  end)

median = Enum.at(Enum.sort(times), div(length(times), 2))
stats = Nx.Vulkan.fallback_stats()

IO.puts(
  "{\"figure\":\"axon_mlp_step\",\"size\":\"784-128-10 b128\",\"value\":#{median},\"unit\":\"us\"," <>
    "\"what\":\"Axon model, Nx.Defn grad with the Evaluator, SGD update, loss read back\"," <>
    "\"fallbacks\":#{map_size(stats)},\"caller\":\"elixir\"}"
)
