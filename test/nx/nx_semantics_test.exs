defmodule Nx.Vulkan.NxSemanticsTest do
  # The differences Nx's own unit tests found (scripts/nx_suite_gate), each checked bit for
  # bit against Nx.BinaryBackend run in the same test.
  use ExUnit.Case, async: false
  import Nx.Vulkan.NxHelpers

  setup do
    raise_on_fallback()
  end

  # `fun` on both backends: the host's result and the device's, as binaries.
  defp both(fun) do
    host_result = Nx.with_default_backend(Nx.BinaryBackend, fun)
    gpu_result = Nx.with_default_backend(Nx.Vulkan.Backend, fun)
    assert gpu_result.data.__struct__ == Nx.Vulkan.VulkanoBackend
    {Nx.to_binary(host_result), Nx.to_binary(gpu_result)}
  end

  defp assert_same_bits(fun) do
    {host_bits, gpu_bits} = both(fun)
    assert gpu_bits == host_bits
  end

  test "NaN results carry Nx's one NaN pattern per type" do
    for type <- [:f16, :bf16, :f32, :f64] do
      assert_same_bits(fn -> Nx.sum(Nx.tensor([:infinity, :neg_infinity], type: type)) end)
      assert_same_bits(fn -> Nx.subtract(Nx.tensor([:infinity], type: type), Nx.tensor([:infinity], type: type)) end)
    end

    for type <- [:c64, :c128] do
      z = Complex.new(:infinity, 1.0)
      w = Complex.new(0.0, :infinity)
      assert_same_bits(fn -> Nx.product(Nx.tensor([z, w], type: type)) end)
    end

    assert_same_bits(fn -> Nx.window_product(Nx.tensor([:infinity, 0.0]), {2}) end)
  end

  test "argmin and argmax take the last of several NaNs, whatever the tie break" do
    t = fn -> Nx.tensor([[:nan, :nan, 1.0], [1.0, :nan, :nan], [:nan, 3.0, :nan], [:nan, 1.0, 2.0]]) end

    for op <- [:argmin, :argmax], tie <- [:low, :high] do
      assert_same_bits(fn -> apply(Nx, op, [t.(), [axis: 1, tie_break: tie]]) end)
    end

    assert Nx.to_list(Nx.argmax(gpu(Nx.tensor([[:nan, :nan, 1.0]])), axis: 1)) == [1]
  end

  test "a real minus a complex number keeps IEEE's positive zero" do
    assert_same_bits(fn -> Nx.subtract(3, Nx.tensor(Complex.new(1.0, 0.0))) end)

    assert_same_bits(fn ->
      Nx.subtract(Nx.tensor([3.0, 0.0]), Nx.tensor([Complex.new(1.0, 0.0), Complex.new(2.0, 0.0)]))
    end)

    assert_same_bits(fn -> Nx.add(Nx.tensor(1.0, type: :f64), Nx.tensor(Complex.new(1.0, -0.0), type: :c128)) end)
  end

  test "round gives +0.0 where it rounds to zero, as Nx (through an integer)" do
    for type <- [:f32, :f64, :f16, :bf16] do
      assert_same_bits(fn -> Nx.round(Nx.tensor([-0.3, -0.0, 0.2, -0.5, 2.5, -1.0e-40], type: type)) end)
    end
  end

  test "bf16 results are the nearest f32's top half, as Nx stores them" do
    assert_same_bits(fn -> Nx.multiply(Nx.tensor([1.7, 1.1, 3.3], type: :bf16), Nx.tensor(1.1, type: :bf16)) end)
    assert_same_bits(fn -> Nx.as_type(Nx.tensor([1.7, -2.9, 1.0e-3]), :bf16) end)
    assert_same_bits(fn -> Nx.as_type(Nx.tensor([1.7, -2.9, 1.0e-3], type: :f64), :bf16) end)
    assert_same_bits(fn -> Nx.exp(Nx.tensor([0.5, 1.5], type: :bf16)) end)
    key = Nx.Random.key(44)
    assert_same_bits(fn -> Nx.Random.uniform_split(key, Nx.tensor(0, type: :bf16), Nx.tensor(100, type: :bf16)) end)
    bits = Nx.with_default_backend(Nx.Vulkan.Backend, fn -> Nx.tensor(42.75, type: :bf16) end)
    assert Nx.to_number(bits) == 42.75
  end

  test "a shift by a negative amount raises Nx's error, on either side" do
    Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
      assert_raise ArgumentError, "cannot right shift by -1", fn -> Nx.right_shift(Nx.tensor(1), -1) end

      assert_raise ArgumentError, "cannot left shift by -2", fn ->
        Nx.left_shift(Nx.tensor([1, 2]), Nx.tensor([3, -2]))
      end

      assert Nx.to_list(Nx.left_shift(Nx.tensor([1, 2]), Nx.tensor([3, 2]))) == [8, 8]
      assert Nx.to_list(Nx.right_shift(Nx.tensor([200], type: :u8), Nx.tensor([255], type: :u8))) == [0]
    end)
  end

  test "Nx's arithmetic errors keep Nx's message" do
    Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
      assert_raise ArithmeticError, "Complex.atan2 only accepts real numbers as arguments", fn ->
        Nx.atan2(1, Nx.tensor(Complex.new(1, 1)))
      end
    end)
  end

  test "out-of-range indices clamp by default and raise Nx's error when bounds-checked" do
    Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
      t = Nx.tensor([[1, 2], [3, 4]])
      assert Nx.to_list(Nx.gather(t, Nx.tensor([[3, -10]]))) == [3]

      Nx.Vulkan.with_bounds_check(fn ->
        assert_raise ArgumentError, "index 3 is out of bounds for axis 0 in shape {2, 2}", fn ->
          Nx.gather(t, Nx.tensor([[3, -10]]))
        end

        assert_raise ArgumentError, "index -1 is out of bounds for axis 1 in shape {2, 2}", fn ->
          Nx.indexed_add(t, Nx.tensor([[0, -1]]), Nx.tensor([1]))
        end

        assert_raise ArgumentError, "index 2 is out of bounds for axis 0 in shape {2, 2}", fn ->
          Nx.indexed_put(t, Nx.tensor([[2, 0]]), Nx.tensor([1]))
        end

        assert Nx.to_list(Nx.indexed_put(t, Nx.tensor([[1, 1]]), Nx.tensor([9]))) == [[1, 2], [3, 9]]
      end)

      # The mode is scoped: clamping again afterwards.
      assert Nx.to_list(Nx.take(Nx.tensor([1, 2]), Nx.tensor([5]))) == [2]
    end)
  end
end
