defmodule Nx.Vulkan.GeneratedFuzzTest do
  # A seeded random-graph fuzz of Nx.Vulkan.Compiler's rewrites (issue 42): graphs of up
  # to 12 element-wise ops (unary, binary, comparisons, select, casts, constants) and
  # reductions over mixed types, read through broadcasts and transposes, and dense-layer
  # style products
  # with transposes. Each runs through the Compiler (generated kernels, fusion, swapped
  # dots; its first call and a replay) and through Nx.Defn.Evaluator op by op: the bytes
  # must agree, a NaN as any NaN (a generated kernel stores Nx's one NaN through
  # `store_elem`, where some static kernels store the hardware's). A failure prints its seed and the shortest prefix of the graph that still
  # fails; `NX_VULKAN_FUZZ_SEED=<seed>` replays a run and `NX_VULKAN_FUZZ_SECONDS` bounds
  # it (default 30).
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  # (Longer runs, NX_VULKAN_FUZZ_SECONDS, outlast ExUnit's 60 s default.)
  @moduletag timeout: 1_800_000

  alias Nx.Vulkan.Sweep

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  @types [{:f, 32}, {:f, 64}, {:s, 32}, {:u, 32}, {:s, 64}, {:u, 8}, {:s, 16}, {:f, 16}]
  @unary [:negate, :abs, :sign, :ceil, :floor, :round, :sqrt]
  @float_unary [:is_nan, :is_infinity, :exp]
  @int_unary [:bitwise_not]
  @binary [:add, :subtract, :multiply, :divide, :min, :max]
  @compare [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal]
  @logical [:logical_and, :logical_or, :logical_xor]
  @int_binary [:bitwise_and, :bitwise_or, :bitwise_xor, :remainder, :quotient]
  @max_ops 12

  defp seconds, do: String.to_integer(System.get_env("NX_VULKAN_FUZZ_SECONDS", "30"))

  defp seed do
    case System.get_env("NX_VULKAN_FUZZ_SEED") do
      nil -> :rand.uniform(1_000_000_000)
      s -> String.to_integer(s)
    end
  end

  ## Graphs: inputs {type, shape, transposed_from}, then ops over earlier values.

  # A random graph over a domain of rank 1 to 3 and its host inputs.
  defp graph(rng) do
    {rank, rng} = :rand.uniform_s(3, rng)
    {dims, rng} = Enum.map_reduce(1..rank, rng, fn _, rng -> :rand.uniform_s(6, rng) end)
    domain = List.to_tuple(dims)
    {n_inputs, rng} = :rand.uniform_s(3, rng)
    {inputs, rng} = Enum.map_reduce(1..n_inputs, rng, fn _, rng -> input(domain, rng) end)
    {n_ops, rng} = :rand.uniform_s(@max_ops, rng)

    {hosts, rng} = Enum.map_reduce(inputs, rng, fn {type, shape, _}, rng -> Sweep.tensor(type, shape, rng) end)

    # Values so far, as host tensors (to know each one's type and shape).
    values = prepared(%{domain: domain, inputs: inputs}, hosts)
    {ops, _values, rng} = Enum.reduce(1..n_ops, {[], values, rng}, fn _, acc -> add_op(acc) end)
    {%{domain: domain, inputs: inputs, ops: Enum.reverse(ops)}, hosts, rng}
  end

  # An input: the domain's shape, a shape that broadcasts to it, or the domain
  # transposed (read back through a transpose).
  defp input(domain, rng) do
    {type, rng} = Sweep.pick(@types, rng)
    {kind, rng} = :rand.uniform_s(3, rng)
    dims = Tuple.to_list(domain)

    case kind do
      1 ->
        {{type, domain, nil}, rng}

      2 ->
        {drop, rng} = :rand.uniform_s(length(dims), rng)

        {ones, rng} =
          Enum.map_reduce(Enum.drop(dims, drop - 1), rng, fn d, rng ->
            {u, rng} = :rand.uniform_s(rng)
            {if(u < 0.4, do: 1, else: d), rng}
          end)

        {{type, List.to_tuple(ones), nil}, rng}

      3 ->
        perm = Enum.reverse(Enum.to_list(0..(length(dims) - 1)))
        {{type, List.to_tuple(Enum.map(perm, &Enum.at(dims, &1))), perm}, rng}
    end
  end

  # One more op, where Nx takes it (an op Nx refuses for these types is not added).
  defp add_op({ops, values, rng}) do
    {kind, rng} = :rand.uniform_s(11, rng)
    n = length(values)
    {a, rng} = :rand.uniform_s(n, rng)
    {b, rng} = :rand.uniform_s(n, rng)
    {a, b} = {a - 1, b - 1}
    ta = Enum.at(values, a).type

    {op, rng} =
      cond do
        kind <= 2 ->
          {u, rng} = Sweep.pick(@unary ++ if(Sweep.float?(ta), do: @float_unary, else: @int_unary), rng)
          {{:unary, u, a}, rng}

        kind <= 6 ->
          int? = not Sweep.float?(ta) and not Sweep.float?(Enum.at(values, b).type)
          {f, rng} = Sweep.pick(@binary ++ @compare ++ @logical ++ if(int?, do: @int_binary, else: []), rng)
          {{:binary, f, a, b}, rng}

        kind == 7 ->
          {f, rng} = Sweep.pick(@binary ++ @compare, rng)

          {c, rng} =
            if Sweep.float?(ta), do: Sweep.pick([0.5, -2.0, 3.0, 0.0], rng), else: Sweep.pick([2, -1, 0, 7], rng)

          {{:constant, f, a, c}, rng}

        kind == 8 ->
          {p, rng} = Sweep.pick(@compare, rng)
          {c, rng} = :rand.uniform_s(n, rng)
          {{:select, p, a, b, c - 1}, rng}

        kind == 11 ->
          # A reduction over random axes: maxima and minima of every type; sums and
          # products of integers, which wrap whatever the order (float sums, whose last
          # bits may follow the order of the additions, are tests of their own).
          {f, rng} = Sweep.pick([:reduce_max, :reduce_min] ++ if(Sweep.float?(ta), do: [], else: [:sum, :product]), rng)
          rank = tuple_size(Enum.at(values, a).shape)

          {axes, rng} =
            Enum.flat_map_reduce(0..(rank - 1)//1, rng, fn axis, rng ->
              {u, rng} = :rand.uniform_s(rng)
              {if(u < 0.5, do: [axis], else: []), rng}
            end)

          {keep, rng} = Sweep.pick([true, true, false], rng)
          {{:reduce, f, a, if(axes == [], do: [max(rank - 1, 0)], else: axes), keep}, rng}

        true ->
          {t, rng} = Sweep.pick(@types, rng)
          {{:as_type, a, t}, rng}
      end

    try do
      value = apply_op(op, values)
      {[op | ops], values ++ [value], rng}
    rescue
      _ -> {ops, values, rng}
    end
  end

  # The op on `values` (host tensors or traced ones alike).
  defp apply_op({:unary, f, a}, values), do: apply(Nx, f, [Enum.at(values, a)])
  defp apply_op({:binary, f, a, b}, values), do: apply(Nx, f, [Enum.at(values, a), Enum.at(values, b)])
  defp apply_op({:constant, f, a, c}, values), do: apply(Nx, f, [Enum.at(values, a), c])

  defp apply_op({:select, p, a, b, c}, values) do
    pred = apply(Nx, p, [Enum.at(values, a), Enum.at(values, c)])
    Nx.select(pred, Enum.at(values, a), Enum.at(values, b))
  end

  defp apply_op({:as_type, a, t}, values), do: Nx.as_type(Enum.at(values, a), t)

  defp apply_op({:reduce, f, a, axes, keep}, values),
    do: apply(Nx, f, [Enum.at(values, a), [axes: axes, keep_axes: keep]])

  # The inputs as the graph reads them: each transposed one read back, a narrower one
  # broadcast to the domain one time in two.
  defp prepared(g, inputs) do
    g.inputs
    |> Enum.zip(inputs)
    |> Enum.with_index(fn {{_type, shape, perm}, t}, i ->
      cond do
        perm != nil -> Nx.transpose(t, axes: inverse(perm))
        shape != g.domain and rem(i, 2) == 0 -> Nx.broadcast(t, g.domain)
        true -> t
      end
    end)
  end

  # The graph as a function of a tuple of inputs; the last value and the first op's are
  # the outputs.
  defp run_graph(g, args) do
    inputs = prepared(g, Tuple.to_list(args))
    values = Enum.reduce(g.ops, inputs, fn op, values -> values ++ [apply_op(op, values)] end)
    {List.last(values), Enum.at(values, length(g.inputs))}
  end

  defp inverse(perm), do: perm |> Enum.with_index() |> Enum.sort() |> Enum.map(&elem(&1, 1))

  # Whether the Compiler's bytes (first call and replay) are the Evaluator's, or raise
  # where the Evaluator raises (an integer division by zero).
  defp agrees?(g, args) do
    fun = &run_graph(g, &1)
    compiled = Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler)

    try do
      Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator).(args)
    rescue
      e -> Enum.all?(1..2, fn _ -> match?({:error, _}, raised(fn -> compiled.(args) end, e)) end)
    else
      want -> Enum.all?(1..2, fn _ -> same?(compiled.(args), want) end)
    end
  end

  defp raised(fun, evaluator_error) do
    fun.()
    :ok
  rescue
    e -> if e.__struct__ == evaluator_error.__struct__, do: {:error, e}, else: :other_error
  end

  defp same?(got, want) do
    Enum.zip(Tuple.to_list(got), Tuple.to_list(want))
    |> Enum.all?(fn {g, w} ->
      g.type == w.type and g.shape == w.shape and
        (Nx.to_binary(g) == Nx.to_binary(w) or Sweep.same_but_nan_payloads?(g, w))
    end)
  end

  # The shortest prefix of the graph's ops that still disagrees.
  defp shrink(g, args) do
    Enum.find_value(1..length(g.ops), g, fn k ->
      prefix = %{g | ops: Enum.take(g.ops, k)}
      if not agrees?(prefix, args), do: prefix
    end)
  end

  # A dense layer's weight gradient (x^T dy, transposed back) with an optional batch axis,
  # or the plain product with a transposed right operand (dy w^T).
  defp product_case(rng) do
    sides = [1, 3, 4, 10, 127, 128, 130, 132, 256]
    {m, rng} = Sweep.pick(sides, rng)
    {n, rng} = Sweep.pick(sides, rng)
    {k, rng} = Sweep.pick([1, 5, 16, 64, 130], rng)
    {type, rng} = Sweep.pick([{:f, 32}, {:f, 32}, {:f, 64}, {:s, 32}], rng)
    {kind, rng} = Sweep.pick([:weight_grad, :batched_grad, :right_transposed], rng)

    {batch, shapes} =
      case kind do
        :batched_grad -> {2, [{2, k, m}, {2, k, n}]}
        :weight_grad -> {0, [{k, m}, {k, n}]}
        :right_transposed -> {0, [{m, k}, {n, k}]}
      end

    {inputs, rng} =
      Enum.map_reduce(shapes, rng, fn shape, rng ->
        gen = fn t, rng -> if Sweep.float?(t), do: :rand.normal_s(rng), else: :rand.uniform_s(19, rng) end
        Sweep.tensor_of(type, shape, rng, gen)
      end)

    {{kind, batch, m, n, k, type}, inputs, rng}
  end

  defp product(:weight_grad, {x, dy}), do: Nx.transpose(Nx.dot(x, [0], dy, [0]))
  defp product(:batched_grad, {x, dy}), do: Nx.transpose(Nx.dot(x, [1], [0], dy, [1], [0]), axes: [0, 2, 1])
  defp product(:right_transposed, {a, bt}), do: Nx.dot(a, [1], bt, [1])

  test "random products with transposes: the Compiler's bytes are the Evaluator's" do
    seed = seed()
    deadline = System.monotonic_time(:millisecond) + div(seconds() * 1000, 3)

    Stream.repeatedly(fn -> nil end)
    |> Enum.reduce_while({0, :rand.seed_s(:exsss, seed)}, fn _, {count, rng} ->
      {{kind, _, _, _, _, _} = c, inputs, rng} = product_case(rng)
      args = inputs |> Enum.map(&Nx.backend_transfer(&1, Nx.Vulkan.Backend)) |> List.to_tuple()
      fun = &product(kind, &1)
      want = Nx.Defn.jit(fun, compiler: Nx.Defn.Evaluator).(args)
      got = Nx.Defn.jit(fun, compiler: Nx.Vulkan.Compiler).(args)

      assert Nx.to_binary(got) == Nx.to_binary(want),
             "seed #{seed} (NX_VULKAN_FUZZ_SEED=#{seed} replays): #{inspect(c)} differs"

      if System.monotonic_time(:millisecond) > deadline, do: {:halt, count + 1}, else: {:cont, {count + 1, rng}}
    end)
    |> then(&IO.puts("swapped-dot fuzz: seed #{seed}, #{&1} products"))
  end

  test "random element-wise graphs with reductions: the Compiler's bytes are the Evaluator's" do
    seed = seed()
    rng = :rand.seed_s(:exsss, seed)
    deadline = System.monotonic_time(:millisecond) + seconds() * 1000
    generated = Nx.Vulkan.stats().generated_kernels

    {count, failure} =
      Stream.repeatedly(fn -> nil end)
      |> Enum.reduce_while({0, nil, rng}, fn _, {count, nil, rng} ->
        {g, hosts, rng} = graph(rng)
        args = hosts |> Enum.map(&Nx.backend_transfer(&1, Nx.Vulkan.Backend)) |> List.to_tuple()

        cond do
          not agrees?(g, args) -> {:halt, {count + 1, {g, args}, rng}}
          System.monotonic_time(:millisecond) > deadline -> {:halt, {count + 1, nil, rng}}
          true -> {:cont, {count + 1, nil, rng}}
        end
      end)
      |> then(fn {count, failure, _rng} -> {count, failure} end)

    if failure do
      {g, args} = failure
      small = shrink(g, args)

      flunk("""
      seed #{seed} (NX_VULKAN_FUZZ_SEED=#{seed} replays): graph #{count} differs; its shortest failing prefix:
      #{inspect(small, pretty: true, limit: :infinity)}
      inputs: #{inspect(Tuple.to_list(args), limit: 40)}
      """)
    end

    IO.puts(
      "generated-kernel fuzz: seed #{seed}, #{count} graphs, #{Nx.Vulkan.stats().generated_kernels - generated} generated kernels"
    )

    # The graphs exercised generated kernels (the count grows by one per group built).
    assert Nx.Vulkan.stats().generated_kernels > generated
  end
end
