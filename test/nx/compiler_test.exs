defmodule Nx.Vulkan.CompilerTest do
  # Nx.Vulkan.Compiler: defn functions run on the GPU; fusion groups become one kernel
  # (counted in Nx.Vulkan.stats/0 dispatches) and give the op-by-op results.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Defn
  import Nx.Vulkan.NxHelpers, only: [host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  defn softmax(x) do
    max = stop_grad(Nx.reduce_max(x, axes: [-1], keep_axes: true))
    e = Nx.exp(x - max)
    e / Nx.sum(e, axes: [-1], keep_axes: true)
  end

  defn log_softmax(x) do
    shifted = x - Nx.reduce_max(x, axes: [-1], keep_axes: true)
    shifted - Nx.log(Nx.sum(Nx.exp(shifted), axes: [-1], keep_axes: true))
  end

  defn layer_norm(x, gamma, beta) do
    n = Nx.axis_size(x, -1)
    mean = Nx.sum(x, axes: [-1], keep_axes: true) / n
    centred = x - mean
    var = Nx.sum(centred * centred, axes: [-1], keep_axes: true) / n
    centred / Nx.sqrt(var + 1.0e-5) * gamma + beta
  end

  defn(relu_affine(x, w, b), do: Nx.max(Nx.dot(x, w) + b, 0.0))

  defn(two_outputs(x), do: {Nx.exp(x) * 2.0, Nx.sum(Nx.abs(x) + 1.0, axes: [1])})

  defn(int_and_float(x, i), do: {Nx.add(i, 1), Nx.negate(Nx.exp(x))})

  defn(shaped_constant(x), do: Nx.exp(x + Nx.broadcast(1.0, {3, 4})))

  defn(total_abs_diff(x, y), do: Nx.sum(Nx.abs(x - y)))

  defp vulkan_jit(fun, opts \\ []), do: Nx.Defn.jit(fun, [compiler: Nx.Vulkan.Compiler] ++ opts)

  defp dispatches(fun) do
    Nx.Vulkan.synchronize()
    before = Nx.Vulkan.stats().dispatches
    result = fun.()
    Nx.Vulkan.synchronize()
    {result, Nx.Vulkan.stats().dispatches - before}
  end

  defp assert_close(got, want, tol) do
    assert got.shape == want.shape
    assert got.type == want.type
    got = Nx.backend_copy(got, Nx.BinaryBackend)
    want = Nx.backend_copy(want, Nx.BinaryBackend)

    assert Nx.all_close(got, want, atol: tol, rtol: tol) |> Nx.to_number() == 1,
           "#{inspect(got)} vs #{inspect(want)}"
  end

  defp sample(shape, type, seed) do
    key = Nx.Random.key(seed)
    {t, _} = Nx.Random.uniform(key, -4.0, 4.0, shape: shape, type: type)
    Nx.backend_copy(t, Nx.BinaryBackend)
  end

  test "softmax is one kernel and matches Nx.BinaryBackend" do
    for type <- [:f32, :f64], shape <- [{7, 33}, {2, 3, 300}, {1, 1}] do
      x = sample(shape, type, 1)
      want = Nx.Defn.jit(&softmax/1, compiler: Nx.Defn.Evaluator).(x)
      fun = vulkan_jit(&softmax/1)
      gpu_x = Nx.backend_copy(x, Nx.Vulkan.Backend)
      fun.(gpu_x)
      {got, n} = dispatches(fn -> fun.(gpu_x) end)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert n == 1, "#{n} dispatches for softmax #{inspect(shape)} #{type}"
      assert_close(got, want, if(type == :f32, do: 1.0e-6, else: 1.0e-14))
    end
  end

  test "fused and unfused results agree (log_softmax, layer norm)" do
    x = sample({5, 64}, :f32, 2)
    gamma = sample({64}, :f32, 3)
    beta = sample({64}, :f32, 4)
    gx = Nx.backend_copy(x, Nx.Vulkan.Backend)

    for {fun, args} <- [{&log_softmax/1, [gx]}, {&layer_norm/3, [gx, gamma, beta]}] do
      fused = apply(vulkan_jit(fun), args)
      unfused = apply(vulkan_jit(fun, fuse: false), args)

      want =
        apply(Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator), Enum.map(args, &Nx.backend_copy(&1, Nx.BinaryBackend)))

      assert_close(fused, unfused, 1.0e-6)
      assert_close(fused, want, 1.0e-5)
    end

    {_, fused_n} = dispatches(fn -> vulkan_jit(&layer_norm/3).(gx, gamma, beta) end)
    {_, unfused_n} = dispatches(fn -> vulkan_jit(&layer_norm/3, fuse: false).(gx, gamma, beta) end)
    assert fused_n < unfused_n
  end

  test "element-wise chains around an unfused op, several outputs, other types" do
    x = sample({8, 16}, :f32, 5)
    w = sample({16, 4}, :f32, 6)
    b = sample({4}, :f32, 7)
    want = Nx.Defn.jit(&relu_affine/3, compiler: Nx.Defn.Evaluator).(x, w, b)
    assert_close(vulkan_jit(&relu_affine/3).(x, w, b), want, 1.0e-5)

    {e2, s} = vulkan_jit(&two_outputs/1).(x)
    {we2, ws} = Nx.Defn.jit(&two_outputs/1, compiler: Nx.Defn.Evaluator).(x)
    assert_close(e2, we2, 1.0e-6)
    assert_close(s, ws, 1.0e-5)

    i = Nx.iota({3}, type: :s32)
    {gi, gx} = vulkan_jit(&int_and_float/2).(Nx.tensor([0.5, -1.0]), i)
    assert host(gi) == Nx.tensor([1, 2, 3], type: :s32)
    assert_close(gx, Nx.negate(Nx.exp(Nx.tensor([0.5, -1.0]))), 1.0e-7)
  end

  test "the fused program's default implementation runs on any backend" do
    x = sample({3, 10}, :f32, 8)
    # The rewritten expression, evaluated on Nx.BinaryBackend: the block's default
    # function (Nx.Vulkan.Fused.evaluate/2) replays the ops.
    expr = Nx.Defn.debug_expr(&softmax/1).(x)
    rewritten = Nx.Vulkan.Compiler.Fusion.rewrite(expr)
    assert %Nx.Defn.Expr{op: :block, args: [%Nx.Vulkan.Fused{} = f | _]} = rewritten.data
    assert length(f.slots) == 6
    got = Nx.Vulkan.Fused.evaluate(f, [x])
    assert_close(got, Nx.Defn.jit(&softmax/1, compiler: Nx.Defn.Evaluator).(x), 1.0e-6)
  end

  test "constants with a shape keep it in the default implementation" do
    x = Nx.tensor([0.5, -1.0, 2.0, 0.0])
    expr = Nx.Defn.debug_expr(&shaped_constant/1).(x)
    rewritten = Nx.Vulkan.Compiler.Fusion.rewrite(expr)
    assert %Nx.Defn.Expr{op: :block, args: [%Nx.Vulkan.Fused{} = f | _]} = rewritten.data
    want = Nx.Defn.jit(&shaped_constant/1, compiler: Nx.Defn.Evaluator).(x)
    assert_close(Nx.Vulkan.Fused.evaluate(f, [x]), want, 1.0e-6)
    assert_close(vulkan_jit(&shaped_constant/1).(x), want, 1.0e-6)
  end

  test "a reduction over few long rows stays unfused; its element-wise part fuses" do
    x = sample({512, 256}, :f32, 9)
    y = sample({512, 256}, :f32, 10)
    expr = Nx.Defn.debug_expr(&total_abs_diff/2).(x, y)
    rewritten = Nx.Vulkan.Compiler.Fusion.rewrite(expr)
    assert %Nx.Defn.Expr{op: :sum, args: [abs_diff, _]} = rewritten.data
    assert %Nx.Defn.Expr{op: :block, args: [%Nx.Vulkan.Fused{slots: slots} | _]} = abs_diff.data
    assert Enum.map(slots, &elem(&1, 0)) == ["input", "input", "subtract", "abs"]
    want = Nx.Defn.jit(&total_abs_diff/2, compiler: Nx.Defn.Evaluator).(x, y)
    assert_close(vulkan_jit(&total_abs_diff/2).(x, y), want, 1.0e-5)
  end

  test "the compiled-function cache keeps the most recently used functions" do
    parent = self()

    fun =
      Nx.Defn.jit(
        fn x ->
          send(parent, {:traced, Nx.size(x)})
          Nx.add(x, 1)
        end,
        compiler: Nx.Vulkan.Compiler
      )

    hot = Nx.iota({1}, type: :f32)
    # 100 other shapes, more than the cache holds, with the hot one called in between.
    for n <- 2..101 do
      fun.(hot)
      fun.(Nx.iota({n}, type: :f32))
    end

    assert traces(1) == 1
    # The oldest shapes were evicted, so shape {2} traces again; a recent one does not.
    fun.(Nx.iota({101}, type: :f32))
    assert traces(101) == 1
    fun.(Nx.iota({2}, type: :f32))
    assert traces(2) == 2
  end

  # How many {:traced, size} messages are waiting (each is one trace of the function).
  defp traces(size, count \\ 0) do
    receive do
      {:traced, ^size} -> traces(size, count + 1)
    after
      0 -> count
    end
  end

  test "constants a traced function builds on the host are device tensors (Nx.take on a table)" do
    table = fn idx -> Nx.take(Nx.tensor([0.8, 0.5], backend: Nx.Defn.Expr), idx) end
    idx = Nx.tensor([0, 1, 0])
    want = Nx.Defn.jit(table, compiler: Nx.Defn.Evaluator).(idx)
    got = Nx.Defn.jit(table, compiler: Nx.Vulkan.Compiler).(Nx.backend_copy(idx, Nx.Vulkan.Backend))
    assert %Nx.Vulkan.VulkanoBackend{} = got.data
    assert host(got) == want
  end

  @tag :axon
  test "Axon's binary_cross_entropy with class weights (positive/negative) through the Compiler" do
    y_true = Nx.tensor([[1], [0], [1], [0]])
    y_pred = Nx.tensor([[0.9], [0.2], [0.4], [0.6]])

    loss = fn t, p ->
      Axon.Losses.binary_cross_entropy(t, p, positive_weight: 0.7, negative_weight: 0.3, reduction: :mean)
    end

    want = Nx.Defn.jit(loss, compiler: Nx.Defn.Evaluator).(y_true, y_pred)
    on = &Nx.backend_copy(&1, Nx.Vulkan.Backend)
    got = Nx.Defn.jit(loss, compiler: Nx.Vulkan.Compiler).(on.(y_true), on.(y_pred))
    assert_in_delta Nx.to_number(got), Nx.to_number(want), 1.0e-6
  end

  test "a grad over mixed vectorized axes compiles (one node seen with several vectorizations)" do
    # Nx's grad_test "mixed vectorized axes with add": the constants pass once reused a
    # node's tensor with another vectorization, and a sum met an axis out of range.
    x = Nx.vectorize(Nx.tensor([[1.0, 2.0], [3.0, 4.0]], backend: Nx.Vulkan.Backend), :x)
    y = Nx.vectorize(Nx.tensor([10.0, 20.0], backend: Nx.Vulkan.Backend), :y)
    grad = fn x, y -> Nx.Defn.grad({x, y}, fn {a, b} -> Nx.add(a, b) end) end
    {gx, gy} = Nx.Defn.jit(grad, compiler: Nx.Vulkan.Compiler).(x, y)
    {wx, wy} = Nx.Defn.jit(grad, compiler: Nx.Defn.Evaluator).(x, y)
    assert gx.vectorized_axes == [x: 2, y: 2] and gy.vectorized_axes == [x: 2, y: 2]
    assert Nx.to_flat_list(Nx.devectorize(gx)) == Nx.to_flat_list(Nx.devectorize(wx))
    assert Nx.to_flat_list(Nx.devectorize(gy)) == Nx.to_flat_list(Nx.devectorize(wy))
  end
end
