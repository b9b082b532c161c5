{:ok, _} = Application.ensure_all_started(:axon)
Nx.default_backend(Nx.Vulkan.Backend)
Nx.Vulkan.set_fallback(:raise)
{batch, inputs, hidden, classes} = {128, 784, 128, 10}
model = Axon.input("x", shape: {nil, inputs}) |> Axon.dense(hidden, activation: :relu) |> Axon.dense(classes)
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

sgd = fn data, grads ->
  Map.new(data, fn {layer, ps} ->
    {layer, Map.new(ps, fn {k, v} -> {k, Nx.subtract(v, Nx.multiply(grads[layer][k], 0.01))} end)}
  end)
end

train_fun = fn data, x, y ->
  {l, grads} = grad_fun.(data, x, y)
  {l, sgd.(data, grads)}
end

train_step = Nx.Defn.jit(train_fun, compiler: Nx.Vulkan.Compiler)
median = fn list -> Enum.at(Enum.sort(list), div(length(list), 2)) end

data =
  Enum.reduce(1..20, state.data, fn _, d ->
    {l, d} = train_step.(d, x, y)
    Nx.to_number(l)
    d
  end)

{program, _template} =
  Enum.find_value(Process.get(), fn
    {{Nx.Vulkan.Compiler.Program, _}, {:program, p, t, _}} -> {p, t}
    _ -> nil
  end)

refs = fn d ->
  flat = Nx.Defn.Composite.flatten_list([d, x, y])
  Enum.map(flat, & &1.data.ref)
end

IO.inspect(length(refs.(data)), label: "inputs")

for round <- 1..3 do
  st0 = Nx.Vulkan.stats()

  {issue, data2} =
    Enum.map_reduce(1..200, data, fn _, d ->
      t0 = System.monotonic_time(:nanosecond)
      {l, d} = train_step.(d, x, y)
      dt = System.monotonic_time(:nanosecond) - t0
      Nx.to_number(l)
      {dt, d}
    end)

  st1 = Nx.Vulkan.stats()

  IO.inspect(
    Map.take(Map.new(st1, fn {k, v} -> {k, if(is_number(v), do: v - Map.get(st0, k, 0), else: v)} end), [
      :dirty_retries,
      :collects,
      :buffers_created,
      :submits,
      :waits,
      :barriers
    ]),
    label: "step loop x200"
  )

  r = refs.(data2)

  {native, _} =
    Enum.map_reduce(1..200, nil, fn _, _ ->
      t0 = System.monotonic_time(:nanosecond)
      {:ok, outs} = Nx.Vulkan.Native.p_run(program, r)
      dt = System.monotonic_time(:nanosecond) - t0
      Nx.Vulkan.synchronize()
      {dt, outs}
    end)

  {walk, _} =
    Enum.map_reduce(1..200, nil, fn _, _ ->
      t0 = System.monotonic_time(:nanosecond)
      _ = Enum.map([data2, x, y], &Nx.Defn.Composite.traverse(&1, fn t -> Nx.to_template(t) end))
      dt = System.monotonic_time(:nanosecond) - t0
      {dt, nil}
    end)

  IO.puts(
    "round #{round}: whole step issue #{div(median.(issue), 1000)} us; p_run alone #{div(median.(native), 1000)} us; templates #{div(median.(walk), 1000)} us"
  )
end
