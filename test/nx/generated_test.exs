defmodule Nx.Vulkan.GeneratedTest do
  # Generated kernels through Nx.Vulkan.Compiler: groups of element-wise ops (comparisons,
  # select, constants, integer ops) become one launch each and give the bytes of
  # Nx.Defn.Evaluator running the same ops one by one; the block's default runs anywhere.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Defn

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  # A dense layer's ReLU and its gradient, as Nx's grad writes them.
  defn relu_and_grad(z, dy) do
    {Nx.max(z, 0.0) * 2.0 - 1, Nx.select(z > 0, dy, 0.0)}
  end

  defn clipped_step(w, g) do
    step = Nx.select(Nx.abs(g) > 1.0, Nx.sign(g), g)
    w - step * 0.5
  end

  # A pre-activation that the ReLU and the ReLU's gradient mask both read: stored by the
  # kernel that computes it, as a second output.
  defn relu_and_mask(x, b, z) do
    e = x + b
    {Nx.max(e, 0.0) * 2.0, Nx.select(e > 0, z, 0.0)}
  end

  # The same through grad's metadata (stop_grad): the value of its operand.
  defn stopped(x, b) do
    e = stop_grad(x + b)
    {Nx.max(e, 0.0) * 2.0, Nx.select(e > 1.0, x, b)}
  end

  # Two groups of several outputs that must not read each other's outputs both ways: B
  # stores x for A, A stores y, which reaches B through a sort (no generated kernel).
  defn crossing(p, q) do
    x = Nx.abs(p)
    y = Nx.floor(q)
    w = Nx.negate(Nx.sort(y))
    {Nx.negate(x) + y, x * 2.0 - w}
  end

  # More constants than one kernel's push words hold (7 words; two each in f64).
  defn(many_constants(x), do: ((x * 1.5 + 2.0 - 3.0 * x) / 4.0 + 5.0 - 6.0 * x + 7.0) * 8.0 - 9.0)

  defn(int_chain(a, b), do: Nx.bitwise_xor(Nx.quotient(a * b, a + 1), b) - 3)

  defn(broadcast_chain(x, row), do: Nx.select(x >= row, x - row, row * 2.0))

  # bench's chain10 with a cast at each end: s16 in, f16 out.
  defn chain_with_casts(i, b) do
    a = Nx.as_type(i, :f32)
    t = a * b + a
    u = Nx.max(t, b) - 0.5
    s = Nx.select(u > a, u, t)
    Nx.as_type(Nx.abs(s) * b - -a, :f16)
  end

  # Inputs through transposes and broadcasts: the kernel's views read their operands.
  defn through_layouts(x, y, col) do
    xt = Nx.transpose(x)
    Nx.select(xt > 0, xt * y, Nx.broadcast(col, {7, 5}, axes: [0]) - y)
  end

  # Reductions with element-wise ops before and after them: a row max that the
  # subtraction reads (kept axes), a row sum; a column sum beside the values it folds (a
  # dense layer's bias gradient); minima and maxima over outer and inner axes at once.
  defn row_max_and_sum(x) do
    m = Nx.reduce_max(x, axes: [1], keep_axes: true)
    d = x - m
    {d, Nx.sum(d * 2.0, axes: [1])}
  end

  defn bias_grad(a, b, c) do
    u = a * b + c
    {u, Nx.sum(u, axes: [0])}
  end

  # Softmax over short rows: exp (the math library's) and the division after the sum,
  # all in one kernel.
  defn short_softmax(x) do
    e = Nx.exp(x - Nx.reduce_max(x, axes: [1], keep_axes: true))
    e / Nx.sum(e, axes: [1], keep_axes: true)
  end

  # Constants that Nx broadcasts to the domain beside reductions: a reduction of one is
  # not generated, and neither is a value of the domain's shape read from reductions and
  # constants alone (the kernel would give it once per row).
  defn(sum_of_constant(x), do: x / Nx.sum(Nx.broadcast(2.0, {4, 8}), axes: [1], keep_axes: true))
  defn(sum_plus_constant(x), do: Nx.sum(x * 3.0, axes: [1], keep_axes: true) + Nx.broadcast(2.0, {4, 8}))

  defn outer_and_inner(x) do
    {Nx.reduce_min(Nx.abs(x) - 1.0, axes: [0, 2]), Nx.reduce_max(x * 3.0, axes: [0, 2], keep_axes: true)}
  end

  defp evaluated(fun, args), do: apply(Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator), args)

  defp launches(fun, args, generate?), do: Nx.Vulkan.NxHelpers.compiled_launches(fun, args, generate: generate?)

  defp assert_same_bytes(got, want) do
    got = if is_tuple(got), do: Tuple.to_list(got), else: [got]
    want = if is_tuple(want), do: Tuple.to_list(want), else: [want]

    for {g, w} <- Enum.zip(got, want) do
      assert g.type == w.type and g.shape == w.shape
      assert Nx.to_binary(g) == Nx.to_binary(w), "#{inspect(g)} vs #{inspect(w)}"
    end
  end

  defp data(shape, type, seed) do
    key = Nx.Random.key(seed)

    t =
      case type do
        {:f, _} -> elem(Nx.Random.normal(key, shape: shape, type: type), 0)
        _ -> elem(Nx.Random.randint(key, -50, 50, shape: shape, type: type), 0)
      end

    Nx.backend_transfer(t, Nx.Vulkan.Backend)
  end

  test "element-wise groups are one launch each and give the op-by-op bytes" do
    cases = [
      {&relu_and_grad/2, [data({64, 33}, {:f, 32}, 1), data({64, 33}, {:f, 32}, 2)]},
      {&clipped_step/2, [data({40, 7}, {:f, 64}, 3), data({40, 7}, {:f, 64}, 4)]},
      {&int_chain/2, [data({300}, {:s, 32}, 5), data({300}, {:s, 32}, 6)]},
      {&int_chain/2, [data({9, 11}, {:s, 64}, 7), data({9, 11}, {:s, 64}, 8)]},
      {&broadcast_chain/2, [data({5, 6}, {:f, 32}, 9), data({6}, {:f, 32}, 10)]},
      {&chain_with_casts/2, [data({70, 3}, {:s, 16}, 15), data({70, 3}, {:f, 32}, 16)]}
    ]

    refused = Nx.Vulkan.stats().generated_refused

    for {fun, args} <- cases do
      {generated, with_kernels} = launches(fun, args, true)
      {_unfused, without} = launches(fun, args, false)
      assert_same_bytes(generated, evaluated(fun, args))
      assert with_kernels < without, "#{inspect(fun)}: #{with_kernels} launches, #{without} without"
    end

    # The Compiler planned only groups the engine generates (none ran op by op instead).
    assert Nx.Vulkan.stats().generated_refused == refused
  end

  test "reductions with their element-wise ops: one launch each, the op-by-op bytes" do
    # (f32 sums add in f64, which holds these sums exactly: the order of the additions,
    # one invocation's against the reduction kernel's tree, changes no bit.)
    for {fun, args, expected} <- [
          {&row_max_and_sum/1, [data({37, 10}, {:f, 32}, 41)], 1},
          {&bias_grad/3, [data({128, 10}, {:f, 32}, 42), data({10}, {:f, 32}, 43), data({128, 10}, {:f, 32}, 44)], 1},
          {&short_softmax/1, [data({37, 10}, {:f, 32}, 48)], 1},
          {&outer_and_inner/1, [data({3, 4, 5}, {:f, 64}, 45)], 2},
          {&outer_and_inner/1, [data({3, 4, 5}, {:f, 32}, 46)], 2}
        ] do
      {got, n} = launches(fun, args, true)
      {_unfused, without} = launches(fun, args, false)
      assert_same_bytes(got, evaluated(fun, args))
      # (fused.comp also runs a softmax as one launch.)
      assert n == expected and n <= without, "#{inspect(fun)}: #{n} launches, #{without} without"
    end

    for fun <- [&sum_of_constant/1, &sum_plus_constant/1] do
      x = data({4, 8}, {:f, 32}, 50)
      assert_same_bytes(Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler).(x), evaluated(fun, [x]))
    end

    # An f64 sum's last bit follows the order of its additions (one invocation in order,
    # the reduction kernel's tree): within a few ulps, in one launch.
    x = data({5, 64}, {:f, 64}, 49)
    {got, 1} = launches(&short_softmax/1, [x], true)
    want = evaluated(&short_softmax/1, [x])
    assert Nx.all_close(got, want, rtol: 1.0e-15, atol: 0) |> Nx.to_number() == 1

    # Rows past 64 elements stay with the reduction kernels (and fused.comp).
    x = data({3, 1500}, {:f, 32}, 47)
    rewrite = fn x -> Nx.Vulkan.Compiler.Generation.rewrite(row_max_and_sum(x)) end
    refute inspect(Nx.Defn.debug_expr(rewrite).(Nx.backend_copy(x, Nx.BinaryBackend))) =~ "reduce_axes: [1]"

    assert_same_bytes(
      Nx.Defn.jit(&row_max_and_sum/1, compiler: Nx.Vulkan.Compiler).(x),
      evaluated(&row_max_and_sum/1, [x])
    )
  end

  test "inputs read through transposes and broadcasts: one launch, the op-by-op bytes" do
    args = [data({5, 7}, {:f, 32}, 21), data({7, 5}, {:f, 32}, 22), data({7}, {:f, 32}, 23)]
    {got, n} = launches(&through_layouts/3, args, true)
    assert_same_bytes(got, evaluated(&through_layouts/3, args))
    assert n == 1

    # The block's default reads them the same way on any backend.
    host = Enum.map(args, &Nx.backend_copy(&1, Nx.BinaryBackend))
    rewrite = fn x, y, col -> Nx.Vulkan.Compiler.Generation.rewrite(through_layouts(x, y, col)) end
    assert inspect(apply(Nx.Defn.debug_expr(rewrite), host)) =~ "Nx.Vulkan.Generated"

    assert_same_bytes(
      apply(Nx.Defn.jit(rewrite, compiler: Nx.Defn.Evaluator), host),
      evaluated(&through_layouts/3, host)
    )
  end

  test "a member read outside its group is one more output of the same launch" do
    for {fun, args, expected} <- [
          {&relu_and_mask/3, [data({6, 5}, {:f, 32}, 31), data({5}, {:f, 32}, 32), data({6, 5}, {:f, 32}, 33)], 2},
          {&stopped/2, [data({7}, {:f, 64}, 34), data({7}, {:f, 64}, 35)], 2}
        ] do
      {got, n} = launches(fun, args, true)
      assert_same_bytes(got, evaluated(fun, args))
      assert n == expected, "#{inspect(fun)}: #{n} launches"
    end
  end

  test "groups of several outputs never wait for each other both ways" do
    args = [data({9}, {:f, 32}, 36), data({9}, {:f, 32}, 37)]
    {got, _n} = launches(&crossing/2, args, true)
    assert_same_bytes(got, evaluated(&crossing/2, args))
  end

  test "more constants than a generated kernel's push words: one launch, the op-by-op bytes" do
    for {type, seed} <- [{{:f, 64}, 17}, {{:f, 32}, 18}] do
      args = [data({3, 4}, type, seed)]
      {got, n} = launches(&many_constants/1, args, true)
      assert_same_bytes(got, evaluated(&many_constants/1, args))
      assert n == 1
    end
  end

  test "the same compiled call, recorded and replayed, keeps the bytes" do
    args = [data({64, 33}, {:f, 32}, 11), data({64, 33}, {:f, 32}, 12)]
    compiled = Nx.Defn.jit(&relu_and_grad/2, compiler: Nx.Vulkan.Compiler)
    want = evaluated(&relu_and_grad/2, args)
    for _ <- 1..4, do: assert_same_bytes(apply(compiled, args), want)
  end

  test "the generated block's default implementation runs on any backend" do
    host = [data({8, 3}, {:f, 32}, 13), data({8, 3}, {:f, 32}, 14)] |> Enum.map(&Nx.backend_copy(&1, Nx.BinaryBackend))
    rewrite = fn z, dy -> Nx.Vulkan.Compiler.Generation.rewrite(relu_and_grad(z, dy)) end
    expr = apply(Nx.Defn.debug_expr(rewrite), host)
    assert inspect(expr) =~ "Nx.Vulkan.Generated"

    # Nx.BinaryBackend runs the blocks' defaults (Nx.Vulkan.Generated.evaluate/2).
    on_host = apply(Nx.Defn.jit(rewrite, compiler: Nx.Defn.Evaluator), host)
    assert_same_bytes(on_host, evaluated(&relu_and_grad/2, host))
    assert {%Nx.Tensor{data: %Nx.BinaryBackend{}}, _} = on_host
  end

  test "a group the engine does not generate says why and is counted" do
    x = Nx.iota({4}, type: :f64, backend: Nx.Vulkan.Backend)
    before = Nx.Vulkan.stats().generated_refused
    # f64 pow runs a math-library kernel: not generated.
    nodes = [{"input", 0, 0, 0, "f64", 0}, {"pow", 0, 0, 0, "f64", 0}, {"negate", 1, 0, 0, "f64", 0}]

    assert {:error, {:unsupported, msg}} =
             Nx.Vulkan.Native.t_generated([4], [], [{"f64", [1], 0}], nodes, [2], [x.data.ref])

    assert msg =~ "pow"
    assert Nx.Vulkan.stats().generated_refused == before + 1
  end

  test "shifts stay out of generated kernels: a negative shift amount still raises" do
    shift = Nx.Defn.jit(fn a, b -> Nx.add(Nx.left_shift(a, b), 1) end, compiler: Nx.Vulkan.Compiler)
    a = Nx.tensor([1, 2, 3], type: :s32, backend: Nx.Vulkan.Backend)
    b = Nx.tensor([1, -1, 2], type: :s32, backend: Nx.Vulkan.Backend)
    eager = catch_error(Nx.add(Nx.left_shift(a, b), 1))
    assert %{__struct__: kind} = eager
    assert_raise kind, fn -> shift.(a, b) end
  end
end
