defmodule Nx.Vulkan.Sweep do
  @moduledoc false
  # The differential sweeps' shared parts (test/nx/sweep_test.exs: element-wise ops;
  # test/nx/sweep_structural_test.exs: reductions, ordering, windows, dots, indexing):
  # random values with each type's edges first, the host side under a deadline, ulp and
  # NaN-payload comparisons, and the seeded, time-bounded loop that reports.

  @int_types [{:u, 8}, {:u, 16}, {:u, 32}, {:u, 64}, {:s, 8}, {:s, 16}, {:s, 32}, {:s, 64}]
  @float_types [{:f, 16}, {:bf, 16}, {:f, 32}, {:f, 64}]

  @doc "Every real type the sweeps draw from."
  def types, do: @int_types ++ @float_types

  @doc "Whether `type` is a float type."
  def float?({k, _}), do: k in [:f, :bf]

  @doc "A random element of `list`."
  def pick(list, rng) do
    {i, rng} = :rand.uniform_s(length(list), rng)
    {Enum.at(list, i - 1), rng}
  end

  @doc "Values at the edges of `type`: zeros, units, extremes, NaN and infinities, integers near 2^k."
  def edge_values({:f, _} = t), do: float_edges(t)
  def edge_values({:bf, _} = t), do: float_edges(t)

  def edge_values({s, bits}) do
    {lo, hi} =
      if s == :s, do: {-Integer.pow(2, bits - 1), Integer.pow(2, bits - 1) - 1}, else: {0, Integer.pow(2, bits) - 1}

    ([0, 1, -1, 2, 7, lo, hi, lo + 1, hi - 1] ++
       for(p <- [15, 16, 24, 31, 32, 53, 63], d <- [-1, 0, 1], do: Integer.pow(2, p) + d))
    |> Enum.filter(&(&1 >= lo and &1 <= hi))
  end

  defp float_edges(t) do
    min_sub = Nx.Constants.smallest_positive_normal(t) |> Nx.to_number() |> Kernel./(4)
    big = Nx.Constants.max_finite(t) |> Nx.to_number()

    [
      0.0,
      -0.0,
      1.0,
      -1.0,
      0.5,
      2.5,
      -2.5,
      :nan,
      :infinity,
      :neg_infinity,
      min_sub,
      -min_sub,
      big,
      -big,
      16_777_217.0,
      1.0e-3
    ]
  end

  @doc "A random value of type `t`: an edge value one time in three, else spread over the range."
  def value(t, rng) do
    {u, rng} = :rand.uniform_s(rng)

    cond do
      u < 0.35 ->
        edges = edge_values(t)
        {i, rng} = :rand.uniform_s(length(edges), rng)
        {Enum.at(edges, i - 1), rng}

      match?({k, _} when k in [:f, :bf], t) ->
        {x, rng} = :rand.normal_s(rng)
        {e, rng} = :rand.uniform_s(rng)
        {x * :math.pow(10, Float.round(e * 6 - 3)), rng}

      true ->
        {s, bits} = t
        {r, rng} = :rand.uniform_s(Integer.pow(2, min(bits, 60)), rng)
        {if(s == :s, do: r - Integer.pow(2, min(bits, 60) - 1), else: r - 1), rng}
    end
  end

  @doc "A random host tensor of `t` and `shape`."
  def tensor(t, shape, rng), do: tensor_of(t, shape, rng, &value/2)

  @doc "A host tensor of `t` and `shape` whose values `gen` (type, rng -> {value, rng}) draws."
  def tensor_of(t, shape, rng, gen) do
    {vals, rng} = Enum.map_reduce(1..max(Nx.size(shape), 1), rng, fn _, rng -> gen.(t, rng) end)
    vals = Enum.take(vals, Nx.size(shape))

    host =
      cond do
        shape == {} -> Nx.tensor(hd(vals), type: t)
        vals == [] -> Nx.broadcast(Nx.tensor(0, type: t), shape)
        true -> Nx.tensor(vals, type: t) |> Nx.reshape(shape)
      end

    {host, rng}
  end

  @doc "The most ulps between elements of two float tensors of `type`."
  def ulps_apart(a, b, type) do
    [x, y] = Enum.map([a, b], &Nx.to_flat_list(Nx.bitcast(&1, int_of(type))))

    Enum.zip(x, y)
    |> Enum.map(fn {p, q} -> abs(order_key(p, type) - order_key(q, type)) end)
    |> Enum.max(fn -> 0 end)
  end

  defp int_of({_, bits}), do: {:s, bits}

  # Float bits as integers that order like the floats.
  defp order_key(i, {_, bits}), do: if(i < 0, do: -Integer.pow(2, bits - 1) - i, else: i)

  @doc "Whether NaNs sit in the same places."
  def nan_pattern_only?(a, b) do
    Nx.to_flat_list(Nx.is_nan(a)) == Nx.to_flat_list(Nx.is_nan(b))
  end

  @doc "The same values where a NaN may carry another payload (Nx writes one NaN; kernels keep the operand's)."
  def same_but_nan_payloads?(got, want) do
    elem(got.type, 0) in [:f, :bf] and nan_pattern_only?(got, want) and
      Nx.to_binary(Nx.select(Nx.is_nan(got), 0, got)) == Nx.to_binary(Nx.select(Nx.is_nan(want), 0, want))
  end

  @doc "Up to 3 differing elements of an element-wise case: {inputs..., device, host}."
  def differing(inputs, got, want) do
    # (A transposed case's inputs are listed in their own order.)
    flat = fn t -> if(Nx.rank(t) == 0, do: Nx.broadcast(t, got.shape), else: t) |> Nx.to_flat_list() end
    bits = fn t -> if elem(t.type, 0) in [:f, :bf], do: Nx.bitcast(t, int_of(t.type)), else: t end
    [g, w | ins] = Enum.map([got, want | inputs], flat)
    [gb, wb] = Enum.map([got, want], &flat.(bits.(&1)))

    [gb, wb, g, w | ins]
    |> Enum.zip()
    |> Enum.filter(fn t -> elem(t, 0) != elem(t, 1) end)
    |> Enum.take(3)
    |> Enum.map(fn t -> {Enum.drop(Tuple.to_list(t), 4), {elem(t, 2), elem(t, 0)}, {elem(t, 3), elem(t, 1)}} end)
  end

  @doc """
  `fun`'s result on Nx.BinaryBackend as `{:ok, result}`, or `:host_raises` where the host
  raises or takes over 5 s (an integer pow by 2^60 is a bignum).
  """
  def on_host(fun) do
    task =
      Task.async(fn ->
        try do
          {:ok, Nx.with_default_backend(Nx.BinaryBackend, fun)}
        rescue
          _ -> :host_raises
        end
      end)

    case Task.yield(task, 5_000) || Task.shutdown(task, :brutal_kill) do
      {:ok, result} -> result
      _ -> :host_raises
    end
  end

  @doc """
  Runs `case_for` (rng -> {case, rng}) and `check` (case -> :ok | :host_raises |
  {:fail, why, got, want}) from `NX_VULKAN_SWEEP_SEED` (or a random seed) until
  `NX_VULKAN_SWEEP_SECONDS` (default 30) pass. Prints the counts and each failure
  through `describe` (failure -> iodata); returns `{seed, failures}`.
  """
  def run(name, case_for, check, describe) do
    seed = String.to_integer(System.get_env("NX_VULKAN_SWEEP_SEED") || "#{:rand.uniform(1_000_000_000)}")
    seconds = String.to_integer(System.get_env("NX_VULKAN_SWEEP_SECONDS") || "30")
    deadline = System.monotonic_time(:millisecond) + seconds * 1000
    rng = :rand.seed_s(:exsss, seed)

    {counts, failures} =
      Stream.unfold(rng, fn rng -> if System.monotonic_time(:millisecond) < deadline, do: case_for.(rng) end)
      |> Enum.reduce({%{ok: 0, skipped: 0}, []}, fn c, {counts, failures} ->
        case check.(c) do
          :ok -> {Map.update!(counts, :ok, &(&1 + 1)), failures}
          :host_raises -> {Map.update!(counts, :skipped, &(&1 + 1)), failures}
          {:fail, why, got, want} -> {counts, [{c, why, got, want} | failures]}
        end
      end)

    IO.puts(
      "#{name}: seed #{seed}, #{counts.ok} cases agree, #{counts.skipped} skipped (the host raises), #{length(failures)} differ"
    )

    failures = Enum.reverse(failures)
    for failure <- failures, do: IO.puts(describe.(failure))
    {seed, failures}
  end
end
