defmodule Nx.Vulkan.ComplexRealTest do
  # atan2 of complex tensors, which Nx defines only where every imaginary part is zero:
  # on the GPU (fallback raising) against Nx.BinaryBackend, and the same ArithmeticError
  # as BinaryBackend for any other imaginary part. (Nx.erf, erfc and erf_inv reject
  # complex tensors before any backend sees them; the engine's complex erf family, for
  # direct backend callers, is tested in native/nx_vulkan/tests/complex_real.rs.)
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  @reals [-3.5, -0.75, -0.0, 0.0, 0.3, 0.99, 1.25, 4.5]

  defp complex(values, type),
    do: Nx.tensor(Enum.map(values, &Complex.new(&1, 0.0)), type: type, backend: Nx.BinaryBackend)

  test "Nx itself rejects complex erf, erfc and erf_inv, whatever the backend" do
    x = complex([0.5], {:c, 64})

    for op <- [:erf, :erfc, :erf_inv], t <- [x, gpu(x)] do
      assert_raise ArgumentError, ~r/does not support complex inputs/, fn -> apply(Nx, op, [t]) end
    end
  end

  test "atan2 with zero imaginary parts matches BinaryBackend" do
    for type <- [{:c, 64}, {:c, 128}] do
      a = complex(@reals, type)
      b = Nx.tensor(-2.0, type: :f32, backend: Nx.BinaryBackend)
      want = Nx.atan2(a, b)
      got = Nx.atan2(gpu(a), gpu(b))
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert host(got) == want, "atan2 #{inspect(type)}"
    end
  end

  test "a non-zero imaginary part raises ArithmeticError, as on BinaryBackend" do
    z = Nx.tensor([Complex.new(0.5, 0.0), Complex.new(0.25, -2.0)], backend: Nx.BinaryBackend)

    assert_raise ArithmeticError, fn -> Nx.atan2(z, 1.0) end

    assert_raise ArithmeticError, ~r/Complex.atan2 only accepts real numbers/, fn ->
      Nx.atan2(gpu(z), gpu(Nx.tensor(1.0, backend: Nx.BinaryBackend)))
    end
  end
end
