defmodule Nx.Vulkan.WindowTest do
  # window_sum/product/max/min on the GPU against Nx.BinaryBackend, fallback raising.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  @configs [
    {{2, 2}, []},
    {{2, 2}, [strides: [2, 2]]},
    {{3, 3}, [padding: :same]},
    {{2, 3}, [padding: [{1, 0}, {-1, 2}], strides: [1, 2], window_dilations: [2, 1]]},
    {{1, 4}, [padding: :valid, window_dilations: [1, 2]]}
  ]

  test "every window op, type and option against BinaryBackend" do
    for type <- [:s32, :u8, :f32, :f64],
        {window, opts} <- @configs,
        fun <- [&Nx.window_sum/3, &Nx.window_product/3, &Nx.window_max/3, &Nx.window_min/3] do
      t = Nx.iota({6, 9}, type: type) |> Nx.remainder(7) |> Nx.subtract(2) |> Nx.as_type(type)
      want = fun.(t, window, opts)
      got = fun.(gpu(t), window, opts)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      got = host(got)
      assert {got.type, got.shape} == {want.type, want.shape}

      if type in [:f32, :f64] do
        assert Nx.all_close(got, want, atol: 1.0e-5, rtol: 1.0e-6) == Nx.tensor(1, type: :u8),
               "#{inspect(fun)} #{inspect(window)} #{inspect(opts)} #{type}"
      else
        assert Nx.to_binary(got) == Nx.to_binary(want),
               "#{inspect(fun)} #{inspect(window)} #{inspect(opts)} #{type}"
      end
    end
  end

  test "window_scatter_max/min against BinaryBackend, ties and padding" do
    t = Nx.tensor([[7, 2, 5, 3, 10, 2], [3, 8, 9, 3, 4, 2], [1, 5, 7, 5, 6, 1], [0, 6, 2, 7, 2, 8]])

    for {fun, source_shape, opts} <- [
          {&Nx.window_scatter_max/5, {2, 2}, [strides: [2, 3]]},
          {&Nx.window_scatter_min/5, {2, 2}, [strides: [2, 3]]},
          {&Nx.window_scatter_max/5, {3, 3}, [strides: [2, 2], padding: [{1, 1}, {1, 0}]]},
          {&Nx.window_scatter_min/5, {4, 6}, [padding: :same]}
        ],
        type <- [:s32, :f32] do
      t = Nx.as_type(t, type)
      source = Nx.iota(source_shape, type: type) |> Nx.add(1)
      init = Nx.tensor(2, type: type)
      want = fun.(t, source, init, {2, 3}, opts)
      got = fun.(gpu(t), gpu(source), gpu(init), {2, 3}, opts)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert Nx.to_binary(host(got)) == Nx.to_binary(want), "#{inspect(fun)} #{inspect(opts)} #{type}"
    end
  end

  test "a window of the wrong rank is an ArgumentError" do
    assert_raise ArgumentError, fn -> Nx.window_sum(gpu(Nx.iota({2, 3})), {2}) end
  end
end
