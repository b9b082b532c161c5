defmodule Nx.Vulkan.SubByteTest do
  # u2/u4/s2/s4 tensors on the GPU (one byte per element there, Nx's packed bitstrings at
  # the boundary) against Nx.BinaryBackend, fallback raising.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  test "bitstrings round-trip, including a partial last byte" do
    for type <- [:u2, :u4, :s2, :s4], n <- [1, 3, 5, 8] do
      t = Nx.iota({n}, type: :s8) |> Nx.as_type(type)
      got = gpu(t)
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert Nx.to_binary(got) == Nx.to_binary(t), "#{type} #{n}"
      assert bit_size(Nx.to_binary(got)) == n * elem(Nx.type(t), 1)
      assert Nx.to_binary(got, limit: 2) == Nx.to_binary(t, limit: 2)
    end
  end

  # (count_leading_zeros/population_count: Nx.BinaryBackend has no sub-byte clause; the
  # engine's tests/sub_byte.rs checks them against the types' widths.)
  test "arithmetic, conversions and reductions wrap as Nx does" do
    for type <- [:u2, :u4, :s2, :s4] do
      a = Nx.iota({4, 4}, type: :s8) |> Nx.as_type(type)
      b = Nx.transpose(a)

      for fun <- [&Nx.add/2, &Nx.multiply/2, &Nx.subtract/2, &Nx.bitwise_xor/2, &Nx.max/2, &Nx.equal/2] do
        want = fun.(a, b)
        got = fun.(gpu(a), gpu(b))
        assert {got.type, Nx.to_binary(host(got))} == {want.type, Nx.to_binary(want)}, "#{inspect(fun)} #{type}"
      end

      for fun <- [
            &Nx.sum/1,
            &Nx.reduce_min/1,
            &Nx.argmax/1,
            &Nx.bitwise_not/1,
            &Nx.negate/1,
            &Nx.sort/1,
            &Nx.as_type(&1, :f32)
          ] do
        want = fun.(a)
        got = fun.(gpu(a))
        assert {got.type, Nx.to_binary(host(got))} == {want.type, Nx.to_binary(want)}, "#{inspect(fun)} #{type}"
      end
    end

    f = Nx.tensor([9.7, 17.0, -1.0, :infinity, :neg_infinity, -3.9])

    for type <- [:u2, :u4, :s2, :s4] do
      assert Nx.to_binary(Nx.as_type(gpu(f), type)) == Nx.to_binary(Nx.as_type(f, type)), "#{type}"
    end

    u = Nx.tensor([15, 8, 7], type: :u4)
    assert Nx.to_binary(Nx.bitcast(gpu(u), :s4)) == Nx.to_binary(Nx.bitcast(u, :s4))
  end
end
