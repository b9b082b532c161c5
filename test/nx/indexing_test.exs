defmodule Nx.Vulkan.IndexingTest do
  # select, clip and gather (and the Nx functions built on them) on the GPU, against
  # Nx.BinaryBackend, with the host fallback set to raise.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  defp same(fun, inputs) do
    want = apply(fun, inputs)
    got = apply(fun, Enum.map(inputs, &gpu/1)) |> host()
    assert got.type == want.type
    assert got.shape == want.shape
    assert Nx.to_binary(got) == Nx.to_binary(want)
  end

  test "select with scalar and broadcast branches" do
    x = Nx.iota({3, 4}, type: :s32) |> Nx.subtract(5)
    same(fn x -> Nx.select(Nx.greater(x, 0), x, 0) end, [x])
    same(fn x -> Nx.select(Nx.less(x, 0), Nx.tensor([1.5, 2.5, 3.5, 4.5]), x) end, [x])
    same(fn x -> Nx.select(1, x, Nx.negate(x)) end, [x])
    same(fn x -> Nx.tril(x) end, [x])
  end

  test "clip, also of NaN" do
    x = Nx.tensor([-3.0, 0.5, 7.0, :nan, 2.0])
    same(fn x -> Nx.clip(x, 0.0, 4.0) end, [x])
    same(fn x -> Nx.clip(x, -1, 1) end, [Nx.tensor([-5, 0, 9], type: :s8)])
  end

  test "gather, take and take_along_axis" do
    t = Nx.iota({3, 4, 5}, type: :f32)
    same(fn t, i -> Nx.gather(t, i) end, [t, Nx.tensor([[0, 1, 2], [2, 3, 4]])])
    same(fn t, i -> Nx.gather(t, i, axes: [2]) end, [t, Nx.tensor([[4], [0], [1]])])
    same(fn t, i -> Nx.take(t, i, axis: 1) end, [t, Nx.tensor([3, 0, 0, 2])])
    idx = Nx.tensor([[[0, 4], [1, 1], [2, 3], [4, 4]]]) |> Nx.broadcast({3, 4, 2})
    same(fn t, i -> Nx.take_along_axis(t, i, axis: 2) end, [t, idx])
  end

  test "indexed_put and indexed_add, with repeated positions" do
    t = Nx.iota({4, 3}, type: :f32)
    idx = Nx.tensor([[0, 1], [3, 2], [0, 1], [1, 0]])
    upd = Nx.tensor([10.0, 20.0, 30.0, 40.0])
    same(fn t, i, u -> Nx.indexed_put(t, i, u) end, [t, idx, upd])
    same(fn t, i, u -> Nx.indexed_add(t, i, u) end, [t, idx, upd])
    rows = Nx.tensor([[2], [0], [2]])
    same(fn t, i, u -> Nx.indexed_add(t, i, u, axes: [0]) end, [t, rows, Nx.iota({3, 3}, type: :f32)])

    same(fn t, i, u -> Nx.indexed_add(t, i, u) end, [
      Nx.iota({4, 3}, type: :u8),
      idx,
      Nx.tensor([250, 9, 250, 1], type: :u8)
    ])

    same(fn x -> Nx.make_diagonal(x) end, [Nx.tensor([1, 2, 3])])
  end

  test "sort and argsort, both directions, with NaN and ties" do
    x = Nx.tensor([[3.0, :nan, 1.0, 3.0, :neg_infinity], [0.0, -0.0, 2.0, :infinity, 2.0]])

    for dir <- [:asc, :desc], axis <- [0, 1] do
      same(fn x -> Nx.sort(x, axis: axis, direction: dir) end, [x])
      same(fn x -> Nx.argsort(x, axis: axis, direction: dir) end, [x])
    end

    same(fn x -> Nx.argsort(x, type: :u32) end, [Nx.tensor([5, 1, 5, 0, 1], type: :s8)])
    long = Nx.iota({3000}) |> Nx.remainder(17)
    same(fn x -> Nx.argsort(x, direction: :desc) end, [long])
  end
end
