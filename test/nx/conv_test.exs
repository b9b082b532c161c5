defmodule Nx.Vulkan.ConvTest do
  # Nx.conv on the GPU against Nx.BinaryBackend, fallback raising.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  test "conv with strides, padding, dilations, groups and permutations" do
    key = Nx.Random.key(7)
    {x, key} = Nx.Random.uniform(key, shape: {4, 6, 7, 5}, type: :f32)
    {w6, key} = Nx.Random.uniform(key, shape: {4, 6, 3, 2}, type: :f32)
    {w3, _} = Nx.Random.uniform(key, shape: {4, 3, 2, 2}, type: :f32)

    for {w, opts} <- [
          {w6, []},
          {w6, [strides: [2, 1], padding: :same]},
          {w6, [padding: [{1, -1}, {2, 0}], input_dilation: [2, 1], kernel_dilation: [1, 2]]},
          {w3, [feature_group_size: 2]},
          {w6, [batch_group_size: 2]},
          {Nx.transpose(w6, axes: [2, 3, 1, 0]),
           [input_permutation: [0, 3, 1, 2], kernel_permutation: [3, 2, 0, 1], output_permutation: [0, 3, 1, 2]]}
        ] do
      x = if opts[:input_permutation], do: Nx.transpose(x, axes: [0, 2, 3, 1]), else: x
      want = Nx.conv(x, w, opts)
      got = Nx.conv(gpu(x), gpu(w), opts)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      got = host(got)
      assert got.shape == want.shape, inspect(opts)
      assert Nx.all_close(got, want, atol: 1.0e-5, rtol: 1.0e-5) == Nx.tensor(1, type: :u8), inspect(opts)
    end
  end
end
