defmodule Nx.Vulkan.LoadTest do
  # Issue 33, item 4: many BEAM processes issuing mixed ops at once. Each process runs a
  # seeded list of ops (element-wise, reductions, dot, sort, slicing, conversions, uploads
  # and reads); every result must carry the bits of the same op run alone, one process
  # after another, and a process that only sleeps and measures how late it wakes shows
  # that no scheduler was held. Sizes: `NX_VULKAN_LOAD=procs,ops` (default 50,40 in the
  # suite; the issue's figure is 100,1000). Prints throughput beside one process's.
  use ExUnit.Case, async: false
  import Nx.Vulkan.NxHelpers

  @moduletag timeout: 1_800_000

  setup do: raise_on_fallback()

  defp sizes do
    case System.get_env("NX_VULKAN_LOAD") do
      nil -> {50, 40}
      spec -> spec |> String.split(",") |> Enum.map(&String.to_integer/1) |> List.to_tuple()
    end
  end

  # The inputs a process works on (uploaded by the process itself: uploads are load too).
  defp inputs(seed) do
    rng = :rand.seed_s(:exsss, {seed, 5, 7})
    {a, rng} = Enum.map_reduce(1..384, rng, fn _, r -> :rand.uniform_s(r) end)
    {b, rng} = Enum.map_reduce(1..384, rng, fn _, r -> :rand.normal_s(r) end)
    {i, _} = Enum.map_reduce(1..384, rng, fn _, r -> :rand.uniform_s(2000, r) end)

    [
      Nx.tensor(Enum.map(a, &(&1 * 4 - 2)), type: :f32, backend: Nx.BinaryBackend) |> Nx.reshape({16, 24}),
      Nx.tensor(b, type: :f32, backend: Nx.BinaryBackend) |> Nx.reshape({24, 16}),
      Nx.tensor(Enum.map(i, &(&1 - 1000)), type: :s32, backend: Nx.BinaryBackend) |> Nx.reshape({16, 24})
    ]
  end

  defp ops do
    [
      {:add, fn a, _b, i -> Nx.add(a, Nx.as_type(i, :f32)) end},
      {:exp_sum, fn a, _b, _i -> Nx.sum(Nx.exp(a), axes: [1]) end},
      {:dot, fn a, b, _i -> Nx.dot(a, b) end},
      {:softmax, fn a, _b, _i -> Nx.divide(Nx.exp(a), Nx.sum(Nx.exp(a), axes: [1], keep_axes: true)) end},
      {:sort, fn a, _b, _i -> Nx.sort(a, axis: 1) end},
      {:argmax, fn _a, _b, i -> Nx.argmax(i, axis: 0) end},
      {:slice_concat, fn a, _b, i -> Nx.concatenate([a[[0..3]], Nx.as_type(i[[4..7]], :f32)]) end},
      {:int_math, fn _a, _b, i -> Nx.remainder(Nx.multiply(i, 7), 13) |> Nx.right_shift(2) end},
      {:transpose_max, fn a, b, _i -> Nx.max(Nx.transpose(a), b) end},
      {:cumsum, fn _a, b, _i -> Nx.cumulative_sum(b, axis: 0) end},
      {:compare_select, fn a, _b, i -> Nx.select(Nx.greater(a, 0), a, Nx.as_type(i, :f32)) end},
      {:mean_f64, fn a, _b, _i -> Nx.mean(Nx.as_type(a, :f64)) end}
    ]
  end

  # Process `p`'s `n` ops: each result's type, shape and bytes (read back on the way: the
  # reads are part of the load).
  defp work(p, n) do
    Nx.default_backend(Nx.Vulkan.Backend)
    [a, b, i] = Enum.map(inputs(p), &Nx.backend_transfer(&1, Nx.Vulkan.Backend))
    :rand.seed(:exsss, {p, 17, 29})

    for _ <- 1..n do
      {name, fun} = Enum.random(ops())
      r = fun.(a, b, i)
      {name, r.type, r.shape, Nx.to_binary(r)}
    end
  end

  # The longest a sleeping process woke late while `fun` ran, in ms.
  defp wake_lateness(fun) do
    parent = self()

    probe =
      spawn(fn ->
        loop = fn loop, worst ->
          t0 = System.monotonic_time(:microsecond)
          Process.sleep(5)
          late = (System.monotonic_time(:microsecond) - t0 - 5_000) / 1000

          receive do
            :stop -> send(parent, {:worst, max(worst, late)})
          after
            0 -> loop.(loop, max(worst, late))
          end
        end

        loop.(loop, 0.0)
      end)

    result = fun.()
    send(probe, :stop)
    assert_receive {:worst, worst}, 5_000
    {result, worst}
  end

  test "many processes issuing mixed ops at once get the bits of the same ops run alone" do
    {procs, n} = sizes()

    {alone_us, alone} = :timer.tc(fn -> Enum.map(1..procs, &work(&1, n)) end)

    {{together_us, together}, worst_ms} =
      wake_lateness(fn ->
        :timer.tc(fn ->
          1..procs
          |> Task.async_stream(&work(&1, n), max_concurrency: procs, timeout: :infinity, ordered: true)
          |> Enum.map(fn {:ok, r} -> r end)
        end)
      end)

    ops = procs * n

    IO.puts(
      "load: #{procs} processes x #{n} ops: #{round(ops / (together_us / 1.0e6))} ops/s together, " <>
        "#{round(ops / (alone_us / 1.0e6))} ops/s one process at a time; a sleeping process woke at most #{Float.round(worst_ms, 1)} ms late"
    )

    for {{got, want}, p} <- Enum.with_index(Enum.zip(together, alone), 1),
        {{g, w}, k} <- Enum.with_index(Enum.zip(got, want)) do
      assert g == w, "process #{p}, op #{k} (#{elem(w, 0)}): the result under load differs"
    end

    # No scheduler held: a 5 ms sleep never came back a second late.
    assert worst_ms < 1000
  end
end
