defmodule Nx.Vulkan.NifFuzzTest do
  # The NIF boundary under malformed calls (issue 33): every tensor NIF with arguments drawn
  # from wrong terms, types, shapes, axes, dead and foreign references and sizes past memory.
  # Each call must answer `{:ok, _}`, `{:error, {kind, message}}` (kind an atom, message a
  # string) or raise ArgumentError; nothing else (no other exception, no crash, no hang), and
  # afterwards the device still computes and its live memory is back at the baseline.
  # Seeded: NX_VULKAN_FUZZ_SEED reproduces a run, NX_VULKAN_FUZZ_CALLS sets its length; a
  # failure prints the seed and the call.
  use ExUnit.Case, async: false

  alias Nx.Vulkan.Native

  @calls String.to_integer(System.get_env("NX_VULKAN_FUZZ_CALLS", "10000"))
  @moduletag timeout: 900_000

  # Every tensor NIF, as `{name, arity}` (the twins through their wrapper, not their
  # `_nb`/`_dirty` halves): read from the module, so a new NIF is fuzzed too.
  @nif_arities for {name, arity} <- Native.__info__(:functions),
                   n = Atom.to_string(name),
                   String.starts_with?(n, "t_"),
                   not String.ends_with?(n, ["_nb", "_dirty"]),
                   do: {name, arity}

  # Each NIF's arguments by kind, for calls that get past decoding and reach the engine's
  # checks (shapes, types, axes, sizes past memory).
  @kinds %{
    t_alloc: [:int],
    t_deallocate: [:ref],
    t_info: [:ref],
    t_reshape: [:ref, :shape],
    t_window: [:op, :ref, :shape, :shape, :padding, :shape, :type],
    t_window_scatter: [:bool, :ref, :ref, :ref, :shape, :shape, :padding, :type],
    t_triangular_solve: [:ref, :ref, :bool, :bool, :op, :type],
    t_indexed: [:bool, :ref, :ref, :ref, :axes, :type],
    t_sort: [:ref, :int, :bool, :bool, :type],
    t_fft: [:ref, :bool, :int, :int, :number, :type],
    t_from_binary: [:binary, :shape, :type],
    t_to_binary: [:ref, :limit],
    t_constant: [:shape, :type, :number],
    t_iota: [:shape, :type, :limit],
    t_eye: [:shape, :type],
    t_broadcast: [:ref, :shape, :axes],
    t_transpose: [:ref, :axes],
    t_as_type: [:ref, :type],
    t_unary: [:op, :ref, :type],
    t_binary: [:op, :ref, :ref, :shape, :type],
    t_reduce: [:op, :ref, :axes, :bool, :type],
    t_argreduce: [:ref, :int, :bool, :bool, :bool, :type],
    t_dot: [:ref, :axes, :axes, :ref, :axes, :axes, :type],
    t_slice: [:ref, :axes, :shape, :shape],
    t_put_slice: [:ref, :axes, :ref, :type],
    t_concatenate: [:refs, :int, :type],
    t_reverse: [:ref, :axes],
    t_pad: [:ref, :number, :padding, :type],
    t_select: [:ref, :ref, :ref, :shape, :type],
    t_clip: [:ref, :ref, :ref, :type],
    t_gather: [:ref, :ref, :axes],
    t_bitcast: [:ref, :type]
  }

  @types ~w(f32 f64 f16 bf16 s8 s16 s32 s64 u8 u16 u32 u64 c64 c128 u2 s4 f8 pred bogus)
  @ops ~w(add subtract multiply divide exp log sum argmax min max sqrt nope)

  test "#{@calls} malformed calls answer an error or raise ArgumentError, and the VM lives" do
    seed = String.to_integer(System.get_env("NX_VULKAN_FUZZ_SEED", "#{:erlang.phash2(make_ref())}"))
    :rand.seed(:exsss, {seed, 7, 11})
    :erlang.garbage_collect()
    baseline = live_bytes()

    outcomes =
      Enum.reduce(1..@calls, %{}, fn i, acc ->
        {name, arity} = Enum.random(@nif_arities)
        # Half the calls: arguments of the right kinds with wrong values; half: any terms.
        args =
          case @kinds[name] do
            kinds when kinds != nil and rem(i, 2) == 0 -> Enum.map(kinds, &of_kind/1)
            _ -> for _ <- 1..arity, do: term()
          end

        kind = call(name, args, seed, i)
        if rem(i, 500) == 0, do: :erlang.garbage_collect()
        Map.update(acc, kind, 1, &(&1 + 1))
      end)

    IO.puts("nif fuzz: seed #{seed}, #{@calls} calls: #{inspect(outcomes)}")
    assert Map.get(outcomes, :error, 0) + Map.get(outcomes, :argument_error, 0) > div(@calls, 2)

    # The device still computes, and what the calls allocated is back in the pool.
    {:ok, a} = Native.t_from_binary(<<1.0::float-32-native, 2.0::float-32-native>>, [2], "f32")
    {:ok, b} = Native.t_binary("add", a, a, [2], "f32")
    assert {:ok, <<2.0::float-32-native, 4.0::float-32-native>>} = Native.t_to_binary(b, nil)
    live = live_bytes()
    assert live <= baseline + 64, "live bytes #{live} > #{baseline} + 64"
  end

  # Device bytes held by tensors, once this process's garbage is collected and the device
  # is idle (freed buffers go back once their last use has run).
  defp live_bytes do
    :erlang.garbage_collect()
    {:ok, _} = Native.dev_synchronize()
    {:ok, stats} = Native.dev_stats()
    stats.live_bytes
  end

  defp call(name, args, seed, i) do
    result =
      try do
        apply(Native, name, args)
      rescue
        e in ArgumentError -> {:argument_error, Exception.message(e)}
        e -> {:raised, e}
      end

    where = "seed #{seed}, call #{i}: Native.#{name}#{inspect(List.to_tuple(args), limit: 8)}"

    case result do
      {:ok, _} -> :ok
      # t_deallocate answers whether it freed anything.
      b when is_boolean(b) and name == :t_deallocate -> :ok
      {:error, {kind, msg}} when is_atom(kind) and is_binary(msg) -> :error
      {:argument_error, msg} when is_binary(msg) -> :argument_error
      {:raised, e} -> flunk("#{where} raised #{inspect(e, limit: 8)}")
      other -> flunk("#{where} returned #{inspect(other, limit: 8)}")
    end
  end

  # An argument: sometimes what the NIF wants, mostly not.
  defp term do
    case :rand.uniform(16) do
      1 -> live_ref()
      2 -> dead_ref()
      3 -> shape()
      4 -> Enum.random(@types)
      5 -> Enum.random(@ops)
      6 -> Enum.random([0, 1, -1, 2, 3, 7, 255, 2 ** 31, 2 ** 32 + 1, 2 ** 63, -(2 ** 63), 2 ** 70])
      7 -> Enum.random([0.0, -0.0, 1.5, -1.0e300, 3.4e38])
      8 -> :crypto.strong_rand_bytes(Enum.random([0, 1, 3, 8, 17, 64]))
      9 -> Enum.random([nil, true, false, :f32, :ok, :"not an op"])
      10 -> [live_ref(), live_ref()]
      11 -> Enum.random([{}, {1, 2}, %{}, %{a: 1}, self(), make_ref(), fn -> :x end])
      12 -> Enum.random([[], [0], [1, 0], [0, 0], [-1], [5], [0, 1, 2], [2, 2, 2, 2, 2, 2, 2, 2, 2]])
      13 -> Enum.random([[{0, 0, 0}], [{1, -1, 0}, {0, 0, 2}], [{-100, 100, 1_000_000}]])
      14 -> [Enum.random(@types), 1, [2]]
      15 -> shape() |> Enum.map(&(&1 * 3))
      16 -> Enum.random([[1.0, 2.0], ~c"abc", [[1]], [:a]])
    end
  end

  # A value of an argument kind: mostly plausible, at times past the limits.
  defp of_kind(kind) do
    if :rand.uniform(10) == 1, do: term(), else: plausible(kind)
  end

  defp plausible(:ref), do: if(:rand.uniform(10) == 1, do: dead_ref(), else: live_ref())
  defp plausible(:refs), do: for(_ <- 1..:rand.uniform(3), do: live_ref())
  defp plausible(:shape), do: shape()
  defp plausible(:type), do: Enum.random(@types)
  defp plausible(:op), do: Enum.random(@ops)
  defp plausible(:bool), do: Enum.random([true, false])
  defp plausible(:int), do: Enum.random([0, 1, 2, 3, -1, 4096, 2 ** 31, 2 ** 40])
  defp plausible(:limit), do: Enum.random([nil, 0, 1, 3, 2 ** 40])
  defp plausible(:number), do: Enum.random([0, 1, -3, 2.5, 1.0e300, 2 ** 70])
  defp plausible(:binary), do: :crypto.strong_rand_bytes(Enum.random([0, 1, 4, 8, 12, 16, 33]))
  defp plausible(:axes), do: Enum.random([[], [0], [1], [0, 1], [1, 0], [2], [0, 0], [5], [0, 1, 2]])

  defp plausible(:padding),
    do: Enum.random([[{0, 0, 0}], [{1, 1, 0}, {0, 2, 1}], [{-1, 0, 0}], [{0, 0, 2 ** 40}], []])

  # A shape: small, empty, negative, huge (past any memory), or deep.
  defp shape do
    case :rand.uniform(6) do
      1 -> []
      2 -> Enum.map(1..:rand.uniform(3), fn _ -> :rand.uniform(4) end)
      3 -> [0, 3]
      4 -> [-2, 3]
      5 -> [2 ** 31, 2 ** 31]
      6 -> List.duplicate(2, 40)
    end
  end

  # A small live tensor of a random type, or a tensor that has been freed.
  defp live_ref do
    type = Enum.random(~w(f32 s32 u8 f64 s64 c64 f16))
    bytes = %{"f32" => 4, "s32" => 4, "u8" => 1, "f64" => 8, "s64" => 8, "c64" => 8, "f16" => 2}[type]
    shape = Enum.random([[], [3], [2, 2], [1, 4]])
    n = Enum.reduce(shape, 1, &(&1 * &2))
    {:ok, ref} = Native.t_from_binary(:binary.copy(<<1>>, n * bytes), shape, type)
    ref
  end

  defp dead_ref do
    ref = live_ref()
    _ = Native.t_deallocate(ref)
    ref
  end
end
