defmodule Nx.Vulkan.BatchingTest do
  # stack and to_batched on the GPU against Nx.BinaryBackend, fallback raising.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  test "stack along every axis, with type promotion" do
    a = Nx.iota({2, 3}, type: :s32)
    b = Nx.iota({2, 3}, type: :f32) |> Nx.multiply(0.5)

    for axis <- 0..2 do
      want = Nx.stack([a, b], axis: axis)
      got = Nx.stack([gpu(a), gpu(b)], axis: axis) |> host()
      assert got.type == want.type and got.shape == want.shape
      assert Nx.to_binary(got) == Nx.to_binary(want)
    end
  end

  test "to_batched with both leftover modes" do
    t = Nx.iota({5, 2}, type: :u8)

    for leftover <- [:repeat, :discard] do
      want = t |> Nx.to_batched(2, leftover: leftover) |> Enum.map(&Nx.to_binary/1)
      batches = t |> gpu() |> Nx.to_batched(2, leftover: leftover) |> Enum.to_list()
      assert Enum.all?(batches, &match?(%Nx.Vulkan.VulkanoBackend{}, &1.data))
      assert Enum.map(batches, &(&1 |> host() |> Nx.to_binary())) == want
    end
  end

  test "bitcast keeps the bits" do
    t = Nx.tensor([1.0, -2.5, 0.0], type: :f32)
    want = Nx.bitcast(t, :s32)
    got = t |> gpu() |> Nx.bitcast(:s32)
    assert %Nx.Vulkan.VulkanoBackend{} = got.data
    assert Nx.to_binary(host(got)) == Nx.to_binary(want)
  end
end
