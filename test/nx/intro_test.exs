defmodule Nx.Vulkan.IntroTest do
  # The values of notebooks/intro.livemd, on the GPU, against Nx.BinaryBackend.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  test "boot and round trip" do
    assert is_binary(Nx.Vulkan.init())
    t = Nx.tensor([1.0, 2.0, 3.0, 4.0], backend: Nx.Vulkan.Backend)
    assert %Nx.Vulkan.VulkanoBackend{} = t.data
    assert Nx.to_flat_list(host(t)) == [1.0, 2.0, 3.0, 4.0]
    assert Nx.to_flat_list(gpu(Nx.tensor([1, 2, 3]))) == [1, 2, 3]
  end

  test "the intro's values" do
    a = Nx.tensor([1.0, 2.0, 3.0, 4.0], backend: Nx.Vulkan.Backend)
    b = Nx.tensor([10.0, 20.0, 30.0, 40.0], backend: Nx.Vulkan.Backend)
    assert Nx.to_flat_list(Nx.add(a, b)) == [11.0, 22.0, 33.0, 44.0]

    expected = Nx.sigmoid(Nx.tensor([1.0, 2.0, 3.0, 4.0]))
    assert Nx.all_close(host(Nx.sigmoid(a)), expected, atol: 1.0e-6) |> Nx.to_number() == 1

    m = Nx.iota({4, 4}, type: :f32, backend: Nx.Vulkan.Backend)
    assert Nx.to_number(Nx.sum(m)) == 120.0
    assert Nx.to_flat_list(Nx.sum(m, axes: [0])) == [24.0, 28.0, 32.0, 36.0]

    x = Nx.iota({2, 3}, type: :f32, backend: Nx.Vulkan.Backend)
    y = Nx.iota({3, 2}, type: :f32, backend: Nx.Vulkan.Backend)
    assert Nx.to_list(Nx.dot(x, y)) == [[10.0, 13.0], [28.0, 40.0]]
  end

  test "VulkanoBackend is the same backend under the intro's name" do
    t = Nx.tensor([1.0, 2.0], backend: Nx.Vulkan.VulkanoBackend)
    assert Nx.to_flat_list(Nx.multiply(t, 3)) == [3.0, 6.0]
  end

  test "ops on the GPU match Nx.BinaryBackend" do
    key = Nx.Random.key(42)
    {x, _} = Nx.Random.normal(key, shape: {5, 7}, type: :f32)

    checks = [
      fn t -> Nx.exp(t) end,
      fn t -> Nx.tanh(t) end,
      fn t -> Nx.abs(t) |> Nx.sqrt() end,
      fn t -> Nx.transpose(t) end,
      fn t -> Nx.sum(t, axes: [1], keep_axes: true) end,
      fn t -> Nx.reduce_max(t, axes: [0]) end,
      fn t -> Nx.argmax(t, axis: 1) end,
      fn t -> Nx.dot(t, Nx.transpose(t)) end,
      fn t -> Nx.multiply(t, Nx.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])) end,
      fn t -> Nx.greater(t, 0.0) end,
      fn t -> Nx.as_type(t, :s32) end,
      fn t -> Nx.broadcast(Nx.slice_along_axis(t, 0, 1), {3, 7}) end
    ]

    for f <- checks do
      want = f.(x)
      got = f.(gpu(x))
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert got.shape == want.shape and got.type == want.type
      assert Nx.all_close(host(got), want, atol: 1.0e-5, rtol: 1.0e-5) |> Nx.to_number() == 1
    end
  end

  test "errors name the op, shapes and types" do
    a = Nx.tensor([[1.0, 2.0]], backend: Nx.Vulkan.Backend)

    assert_raise ArgumentError, ~r/Nx.Vulkan.Backend.transpose\(f32\{1, 2\}\): .*not a permutation/, fn ->
      Nx.Vulkan.Backend.transpose(a, a, [0, 0])
    end
  end

  test "ops without a kernel use the counted fallback, which can raise" do
    t = Nx.tensor([3.0, 1.0, 2.0], backend: Nx.Vulkan.Backend)
    # A reduction function that is not one op has no GPU form.
    add_twice = fn x, acc -> Nx.add(Nx.multiply(x, 2), acc) end
    assert_raise ArgumentError, ~r/reduce would run on the host/, fn -> Nx.reduce(t, 0, add_twice) end

    Nx.Vulkan.set_fallback(:allow)
    Nx.Vulkan.reset_fallback_stats()
    sum = Nx.reduce(t, 0, add_twice)
    assert %Nx.Vulkan.VulkanoBackend{} = sum.data
    assert Nx.to_number(sum) == 12.0
    assert %{reduce: 1} = Nx.Vulkan.fallback_stats()
  end
end
