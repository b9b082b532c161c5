defmodule Nx.Vulkan.SoakTest do
  # Issue 33, item 4's soak: mixed work for NX_VULKAN_SOAK_SECONDS (the issue's figure is
  # 600) in several processes at once — eager ops, a compiled function, uploads, reads,
  # processes that exit holding tensors — sampling the engine's live and pooled bytes and
  # the BEAM's memory every few seconds. Memory must stay flat: the second half's peak of
  # live bytes no higher than the first half's (with a small allowance), and live bytes
  # back at the start's after the workers end and are collected. Opt-in (tag :soak):
  #
  #     NX_VULKAN_SOAK_SECONDS=600 elixir test/run_offline.exs test/nx/soak_test.exs
  use ExUnit.Case, async: false
  import Nx.Vulkan.NxHelpers
  import Bitwise

  @moduletag :soak
  @moduletag timeout: :infinity

  setup do: raise_on_fallback()

  @workers 4

  defp seconds, do: String.to_integer(System.get_env("NX_VULKAN_SOAK_SECONDS") || "60")

  # One unit of mixed work on tensors of a few sizes; returns a checksum (read back).
  defp unit(step, compiled) do
    n = Enum.at([64, 1000, 4096, 65_536], rem(step, 4))
    a = Nx.iota({n}, type: :f32) |> Nx.divide(n) |> Nx.backend_transfer(Nx.Vulkan.Backend)
    b = Nx.tensor(Enum.map(1..16, &(&1 * step)), type: :s32, backend: Nx.Vulkan.Backend)
    e = a |> Nx.exp() |> Nx.multiply(2.0) |> Nx.subtract(1.0)
    c = compiled.(e)
    s = Nx.add(Nx.sum(c), Nx.as_type(Nx.sum(Nx.remainder(b, 7)), :f32))
    Nx.to_number(s)
  end

  defp worker(deadline, compiled) do
    Nx.default_backend(Nx.Vulkan.Backend)

    Stream.iterate(0, &(&1 + 1))
    |> Enum.reduce_while(0, fn step, units ->
      # Every 50 units the work moves to a fresh process that holds tensors when it exits.
      if rem(step, 50) == 49 do
        t = Nx.iota({4096}, type: :f32, backend: Nx.Vulkan.Backend)
        Task.async(fn -> Nx.multiply(t, 2) |> Nx.sum() |> Nx.to_number() end) |> Task.await(60_000)
      end

      unit(step, compiled)
      if System.monotonic_time(:millisecond) < deadline, do: {:cont, units + 1}, else: {:halt, units + 1}
    end)
  end

  defp live, do: Nx.Vulkan.stats().live_bytes

  test "memory stays flat under mixed work from several processes" do
    :erlang.garbage_collect()
    baseline = live()
    start = System.monotonic_time(:millisecond)
    deadline = start + seconds() * 1000
    softmax = Nx.Defn.jit(fn x -> Nx.divide(Nx.exp(x), Nx.sum(Nx.exp(x))) end, compiler: Nx.Vulkan.Compiler)

    workers = for _ <- 1..@workers, do: Task.async(fn -> worker(deadline, softmax) end)

    samples =
      Stream.repeatedly(fn ->
        Process.sleep(2_000)
        {System.monotonic_time(:millisecond) - start, live(), Nx.Vulkan.stats().pooled_bytes, :erlang.memory(:total)}
      end)
      |> Enum.take_while(fn {t, _, _, _} -> t < seconds() * 1000 end)

    units = workers |> Enum.map(&Task.await(&1, :infinity)) |> Enum.sum()
    :erlang.garbage_collect()
    Process.sleep(200)
    after_ = live()

    {first, second} = Enum.split(samples, div(length(samples), 2))
    peak = fn half -> half |> Enum.map(&elem(&1, 1)) |> Enum.max(fn -> 0 end) end
    beam = fn half -> half |> Enum.map(&elem(&1, 3)) |> Enum.max(fn -> 0 end) end

    IO.puts(
      "soak: #{seconds()} s, #{@workers} processes, #{units} units of work; live bytes peak " <>
        "#{peak.(first)} in the first half, #{peak.(second)} in the second; BEAM memory peak " <>
        "#{div(beam.(first), 1 <<< 20)} MiB then #{div(beam.(second), 1 <<< 20)} MiB; live bytes " <>
        "#{baseline} before, #{after_} after"
    )

    assert length(samples) >= 4
    # Flat: the second half's peak within the first's plus one of the largest tensors.
    assert peak.(second) <= peak.(first) + 4 * 65_536 * 8
    assert beam.(second) <= beam.(first) * 1.25
    assert after_ <= baseline
  end
end
