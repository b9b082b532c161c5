defmodule Nx.Vulkan.ProgramTest do
  # Nx.Vulkan.Compiler's recorded programs (issue 41, step 1): a compiled function's first
  # call is recorded, later calls replay it in one native call, with the bits of
  # Nx.Defn.Evaluator's op-by-op run; functions that read the device while they run, or
  # call back into Elixir, stay op by op.
  use ExUnit.Case, async: false

  import Nx.Defn

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  defn mlp_loss(w1, b1, w2, b2, x, y) do
    h = Nx.max(Nx.dot(x, w1) + b1, 0.0)
    logits = Nx.dot(h, w2) + b2
    shifted = logits - Nx.reduce_max(logits, axes: [1], keep_axes: true)
    log_p = shifted - Nx.log(Nx.sum(Nx.exp(shifted), axes: [1], keep_axes: true))
    -Nx.mean(Nx.sum(y * log_p, axes: [1]))
  end

  defn mlp_step(w1, b1, w2, b2, x, y) do
    {loss, {g1, gb1, g2, gb2}} =
      value_and_grad({w1, b1, w2, b2}, fn {w1, b1, w2, b2} -> mlp_loss(w1, b1, w2, b2, x, y) end)

    {loss, w1 - 0.1 * g1, b1 - 0.1 * gb1, w2 - 0.1 * g2, b2 - 0.1 * gb2}
  end

  defn(tuple_and_parameter(x, y), do: {x, y * 2, {Nx.sum(x), x + y}})
  defn(constant_only(_x), do: Nx.iota({3, 4}) |> Nx.multiply(2.5) |> Nx.add(Nx.tensor([1.0, 2.0, 3.0, 4.0])))
  defn(mixed_types(i, x), do: {Nx.sin(i) * x, Nx.argmax(x, axis: 1), Nx.as_type(i, :f64) / 3})
  defn(countdown(x), do: while({x, i = 0}, i < 4, do: {x * 2, i + 1}))
  defn(with_hook(x), do: hook(Nx.exp(x), :seen, &send(self(), {:hook, &1})))

  defp compiled(fun), do: Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler)
  defp evaluator(fun), do: Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator)

  defp gpu(t), do: Nx.backend_transfer(t, Nx.Vulkan.Backend)

  defp bits(result) do
    [result] |> Nx.Defn.Composite.flatten_list() |> Enum.map(&{&1.type, &1.shape, Nx.to_binary(&1)})
  end

  # `call` run once; the counters' growth (native calls, program runs) over it.
  defp counting(call) do
    s0 = Nx.Vulkan.stats()
    result = call.()
    s1 = Nx.Vulkan.stats()
    {result, s1.native_calls - s0.native_calls, s1.program_runs - s0.program_runs}
  end

  defp mlp_args(seed) do
    key = Nx.Random.key(seed)
    {w1, key} = Nx.Random.normal(key, 0.0, 0.1, shape: {784, 128}, type: :f32)
    {w2, key} = Nx.Random.normal(key, 0.0, 0.1, shape: {128, 10}, type: :f32)
    {x, key} = Nx.Random.uniform(key, shape: {128, 784}, type: :f32)
    {labels, _} = Nx.Random.randint(key, 0, 10, shape: {128})
    y = Nx.equal(Nx.new_axis(labels, 1), Nx.iota({1, 10})) |> Nx.as_type(:f32)
    Enum.map([w1, Nx.broadcast(0.0, {128}), w2, Nx.broadcast(0.0, {10}), x, y], &gpu/1)
  end

  # After the recording call, each call is one native call and one program run, and gives
  # the Evaluator's bits.
  defp assert_replays(fun, args_list) do
    vk = compiled(fun)
    ev = evaluator(fun)

    for {args, i} <- Enum.with_index(args_list) do
      {got, calls, runs} = counting(fn -> apply(vk, args) end)
      assert bits(got) == bits(apply(ev, args)), "call #{i}"
      if i > 0, do: assert({calls, runs} == {1, 1}, "call #{i}: #{calls} native calls, #{runs} program runs")
    end
  end

  test "a compiled Axon-style MLP step replays in one native call with the Evaluator's bits" do
    Nx.default_backend(Nx.Vulkan.Backend)
    assert_replays(&mlp_step/6, [mlp_args(1), mlp_args(2), mlp_args(3)])
  end

  test "tuples, parameters returned as outputs, constant-only functions and mixed types" do
    Nx.default_backend(Nx.Vulkan.Backend)
    x = fn s -> gpu(Nx.iota({3, 4}, type: :f32) |> Nx.multiply(s)) end
    assert_replays(&tuple_and_parameter/2, for(s <- [1.0, 2.0, 3.0], do: [x.(s), x.(s + 1)]))
    assert_replays(&constant_only/1, for(s <- [1.0, 2.0, 3.0], do: [x.(s)]))
    ints = fn s -> gpu(Nx.iota({3, 4}, type: :s32) |> Nx.add(16_777_216 * s)) end
    assert_replays(&mixed_types/2, for(s <- [1, 2, 3], do: [ints.(s), x.(s)]))
  end

  test "the replay's outputs are new tensors; earlier outputs keep their values" do
    Nx.default_backend(Nx.Vulkan.Backend)
    vk = compiled(&tuple_and_parameter/2)
    a = gpu(Nx.tensor([[1.0, 2.0]]))
    b = gpu(Nx.tensor([[3.0, 4.0]]))
    _recording = vk.(a, b)
    {_, first, {_, sum1}} = vk.(a, b)
    {_, second, _} = vk.(b, a)
    # Eager ops reading a replay's outputs, while later calls run.
    assert Nx.to_flat_list(Nx.add(first, sum1)) == [10.0, 14.0]
    assert Nx.to_flat_list(second) == [2.0, 4.0]
    assert Nx.to_flat_list(first) == [6.0, 8.0]
  end

  test "a while loop reads its predicate from the device: not recorded, still right" do
    vk = compiled(&countdown/1)
    x = gpu(Nx.tensor([1.0, 2.0]))
    # The first call tries to record it.
    _ = vk.(x)

    for _ <- 1..2 do
      op_by_op = Nx.Vulkan.stats().compiled_calls_op_by_op
      {{r, i}, calls, runs} = counting(fn -> vk.(x) end)
      assert Nx.to_flat_list(r) == [16.0, 32.0] and Nx.to_number(i) == 4
      assert runs == 0 and calls > 1
      assert Nx.Vulkan.stats().compiled_calls_op_by_op == op_by_op + 1
    end
  end

  test "a function with a hook runs its hook on every call (never recorded)" do
    vk = compiled(&with_hook/1)
    x = gpu(Nx.tensor([0.0]))

    for _ <- 1..3 do
      {_, _, runs} = counting(fn -> vk.(x) end)
      assert runs == 0
      assert_receive {:hook, t}
      assert Nx.to_flat_list(t) == [1.0]
    end
  end

  test "eight processes calling one compiled function at once" do
    # A function of its own, whose calls this test counts.
    step = fn w1, b1, w2, b2, x, y -> mlp_step(w1, b1, w2, b2, x, y) end
    vk = compiled(step)
    args = mlp_args(4)
    want = bits(apply(evaluator(step), args))
    s0 = Nx.Vulkan.stats()

    results =
      1..8
      |> Task.async_stream(fn _ -> for(_ <- 1..3, do: bits(apply(vk, args))) end, timeout: 300_000, max_concurrency: 8)
      |> Enum.flat_map(fn {:ok, r} -> r end)

    s1 = Nx.Vulkan.stats()
    assert length(results) == 24
    assert Enum.all?(results, &(&1 == want))
    # Each process records its first call and replays the other two.
    assert s1.programs_recorded - s0.programs_recorded == 8
    assert s1.program_runs - s0.program_runs == 16
    assert s1.compiled_calls_op_by_op == s0.compiled_calls_op_by_op
  end

  test "the bounds-checked mode checks every call's indices (no replay)" do
    vk = compiled(&Nx.take(&1, &2))
    table = gpu(Nx.tensor([1.0, 2.0, 3.0]))
    _ = vk.(table, gpu(Nx.tensor([0, 1])))
    {r, _, 1} = counting(fn -> vk.(table, gpu(Nx.tensor([2, 0]))) end)
    assert Nx.to_flat_list(r) == [3.0, 1.0]

    Nx.Vulkan.with_bounds_check(fn ->
      assert_raise ArgumentError, fn -> vk.(table, gpu(Nx.tensor([5, 0]))) end
    end)
  end

  test "record: false keeps every call op by op" do
    vk = Nx.Defn.jit(&tuple_and_parameter/2, compiler: Nx.Vulkan.Compiler, record: false)
    {x, y} = {gpu(Nx.tensor([1.0])), gpu(Nx.tensor([2.0]))}
    _ = vk.(x, y)
    {_, calls, runs} = counting(fn -> vk.(x, y) end)
    assert runs == 0 and calls > 1
  end
end
