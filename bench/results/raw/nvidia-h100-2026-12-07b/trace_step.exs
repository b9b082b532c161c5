# 25 Evaluator Axon steps; stderr carries NX_VULKAN_TRACE's lines. Prints a marker before the last 2.
root = File.cwd!()
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))

{:ok, _, _} =
  Path.wildcard(Path.join(root, "lib/**/*.ex"))
  |> Kernel.--([Path.join(root, "lib/nx_vulkan/native_path.ex")])
  |> Kernel.ParallelCompiler.compile()

{:ok, _} = Application.ensure_all_started(:axon)
Nx.default_backend(Nx.Vulkan.Backend)
model = Axon.input("x", shape: {nil, 784}) |> Axon.dense(128, activation: :relu) |> Axon.dense(10)
{init_fn, predict_fn} = Axon.build(model)
state = init_fn.(Nx.template({128, 784}, :f32), Axon.ModelState.empty())
{x, key} = Nx.Random.uniform(Nx.Random.key(42), shape: {128, 784}, type: :f32)
{labels, _} = Nx.Random.randint(key, 0, 10, shape: {128}, type: :s32)
y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, 10})) |> Nx.as_type(:f32)

loss = fn data, x, y ->
  Axon.Losses.categorical_cross_entropy(y, predict_fn.(%{state | data: data}, x), from_logits: true, reduction: :mean)
end

vg = Nx.Defn.jit(fn data, x, y -> Nx.Defn.value_and_grad(data, &loss.(&1, x, y)) end, compiler: Nx.Vulkan.Compiler)

for i <- 1..25 do
  if i >= 24, do: IO.puts(:stderr, "=== step #{i} t=#{System.monotonic_time(:microsecond)}")
  {l, _} = vg.(state.data, x, y)
  Nx.to_number(l)
  if i >= 24, do: IO.puts(:stderr, "=== end #{i} t=#{System.monotonic_time(:microsecond)}")
end
