defmodule Nx.Vulkan.ReduceFunTest do
  # Nx.reduce/window_reduce with an Elixir function: one add/multiply/max/min/logical op
  # runs on the GPU (fallback raising); anything else takes the counted host fallback.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  test "reduce with one associative op, over axes, with an accumulator" do
    ints = Nx.iota({2, 3, 4}, type: :s32) |> Nx.subtract(7)
    flags = Nx.greater(ints, -3)

    for {t, acc, fun} <- [
          {ints, 5, &Nx.add/2},
          {ints, 2, &Nx.multiply/2},
          {ints, -100, &Nx.max/2},
          {ints, 3, fn x, y -> Nx.min(y, x) end},
          {flags, 1, &Nx.logical_and/2},
          {flags, 0, &Nx.logical_or/2}
        ],
        opts <- [[], [axes: [1]], [axes: [0, 2], keep_axes: true]] do
      want = Nx.reduce(t, acc, opts, fun)
      got = Nx.reduce(gpu(t), acc, opts, fun)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert host(got) == want, inspect({acc, opts})
    end
  end

  test "window_reduce pads with the accumulator as Nx does" do
    t = Nx.iota({4, 5}, type: :f32)

    for {acc, fun} <- [{0.5, &Nx.add/2}, {-1.0, &Nx.max/2}, {2.0, &Nx.multiply/2}],
        opts <- [[], [strides: [2, 1], padding: [{1, 0}, {2, 1}]], [padding: :same, window_dilations: [1, 2]]] do
      want = Nx.window_reduce(t, acc, {2, 2}, opts, fun)
      got = Nx.window_reduce(gpu(t), acc, {2, 2}, opts, fun)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert host(got) == want, inspect({acc, opts})
    end
  end

  test "any other function takes the counted host fallback, which says why" do
    t = gpu(Nx.tensor([1, 2, 3]))
    error = assert_raise ArgumentError, fn -> Nx.reduce(t, 0, fn x, y -> Nx.add(x, Nx.multiply(y, 2)) end) end
    assert error.message =~ "reduce would run on the host" and error.message =~ "not one add/multiply"
  end

  test "the host fallback runs a user function with Nx.Vulkan.Backend as the default backend" do
    Nx.Vulkan.set_fallback(:allow)
    Nx.default_backend(Nx.Vulkan.Backend)
    # The function makes constants (2, 1.5) on the default backend: inside the fallback
    # that is Nx.BinaryBackend, which can read them.
    fun = fn x, acc -> Nx.add(Nx.multiply(x, 2), Nx.multiply(acc, 1.5)) end
    t = Nx.tensor([[1.0, 2.0], [3.0, 4.0]])
    got = Nx.reduce(t, 1.0, [axes: [1]], fun)
    assert %Nx.Vulkan.VulkanoBackend{} = got.data

    want =
      Nx.with_default_backend(Nx.BinaryBackend, fn ->
        Nx.reduce(Nx.backend_copy(t, Nx.BinaryBackend), 1.0, [axes: [1]], fun)
      end)

    assert Nx.to_flat_list(got) == Nx.to_flat_list(want)
  end

  test "scoped fallback counting and a per-process strict mode" do
    Nx.Vulkan.set_fallback(:allow)
    t = gpu(Nx.tensor([1, 2, 3]))
    fun = fn x, y -> Nx.add(x, Nx.multiply(y, 2)) end
    {value, counts} = Nx.Vulkan.count_fallbacks(fn -> Nx.reduce(t, 0, fun) end)
    assert Nx.to_number(value) == Nx.to_number(Nx.reduce(Nx.tensor([1, 2, 3]), 0, fun))
    assert counts == %{reduce: 1}
    assert {_, %{}} = Nx.Vulkan.count_fallbacks(fn -> Nx.sum(t) end)
    # Nested scopes each see their own; the outer one sees both.
    {{_, inner}, outer} =
      Nx.Vulkan.count_fallbacks(fn ->
        Nx.reduce(t, 0, fun)
        Nx.Vulkan.count_fallbacks(fn -> Nx.reduce(t, 1, fun) end)
      end)

    assert inner == %{reduce: 1} and outer == %{reduce: 2}

    assert_raise ArgumentError, ~r/reduce would run on the host/, fn ->
      Nx.Vulkan.with_fallback(:raise, fn -> Nx.reduce(t, 0, fun) end)
    end

    # The strict mode was the calling process's only, and only inside the block.
    assert Nx.Vulkan.Backend.Fallback.mode() == :allow

    assert Task.async(fn -> Nx.Vulkan.with_fallback(:raise, fn -> Nx.Vulkan.Backend.Fallback.mode() end) end)
           |> Task.await() == :raise
  end
end
