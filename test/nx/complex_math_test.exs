defmodule Nx.Vulkan.ComplexMathTest do
  # exp, log, sin, ... cbrt and pow of c64/c128 tensors on the GPU (fallback raising)
  # against Nx.BinaryBackend, element by element. Inputs where BinaryBackend raises
  # (an Erlang float division by zero or overflow inside the `complex` library) are left
  # out: the GPU gives IEEE infinities there.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  # Each function is a shader module of its own: on lavapipe its pipeline takes seconds to
  # build, about two minutes for the c64 and c128 sets together.
  @moduletag timeout: 600_000

  import Nx.Vulkan.NxHelpers, only: [gpu: 1, host: 1]

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  @unary [:exp, :expm1, :log, :log1p, :sigmoid, :sin, :cos, :tan, :sinh, :cosh, :tanh] ++
           [:asin, :acos, :atan, :asinh, :acosh, :atanh, :rsqrt, :cbrt]

  @steps [-4.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.5]
  @grid for re <- @steps, im <- @steps, do: Complex.new(re, im)
  @specials for re <- [:infinity, :neg_infinity, :nan, 0.0, 1.5],
                im <- [:infinity, :neg_infinity, :nan, 0.0, -2.0],
                not (is_float(re) and is_float(im)),
                do: Complex.new(re, im)

  # The values of `fun` that BinaryBackend computes (the others raise there), with
  # their inputs, as two tensors of `type`.
  defp defined(values, type, fun) do
    values
    |> Enum.flat_map(fn z ->
      x = Nx.tensor([z], type: type, backend: Nx.BinaryBackend)

      try do
        [{x, fun.(x)}]
      rescue
        ArithmeticError -> []
      end
    end)
    |> Enum.unzip()
    |> then(fn {xs, ys} -> {Nx.concatenate(xs), Nx.concatenate(ys)} end)
  end

  defp assert_close(got, want, type, what) do
    got = host(got)
    assert {got.type, got.shape} == {want.type, want.shape}, what
    tol = if type == {:c, 64}, do: [rtol: 1.0e-6, atol: 1.0e-6], else: [rtol: 1.0e-12, atol: 1.0e-13]
    ok = Nx.all_close(got, want, [equal_nan: true] ++ tol)
    assert ok == Nx.tensor(1, type: :u8), "#{what}: #{inspect(got)} vs #{inspect(want)}"
  end

  test "unary functions of finite values" do
    for type <- [{:c, 64}, {:c, 128}], op <- @unary do
      {x, want} = defined(@grid, type, &apply(Nx, op, [&1]))
      got = apply(Nx, op, [gpu(x)])
      assert %Nx.Vulkan.VulkanoBackend{} = got.data
      assert_close(got, want, type, "#{op} #{inspect(type)}")
    end
  end

  test "special values where the library has clauses for them" do
    for op <- [:exp, :expm1, :log, :sin, :cos, :asin, :acos] do
      {x, want} = defined(@specials, {:c, 128}, &apply(Nx, op, [&1]))
      got = host(apply(Nx, op, [gpu(x)]))

      assert Nx.to_binary(got) == Nx.to_binary(want) or
               Nx.all_close(got, want, equal_nan: true) == Nx.tensor(1, type: :u8),
             "#{op}: #{inspect(got)} vs #{inspect(want)}"
    end
  end

  test "pow of complex tensors, and of a complex and a real one" do
    exponents = [Complex.new(2.0, 0.0), Complex.new(0.5, -1.5), Complex.new(-2.5, 3.0)]

    for type <- [{:c, 64}, {:c, 128}], y <- exponents do
      yt = Nx.tensor(y, type: type, backend: Nx.BinaryBackend)
      {x, want} = defined(@grid, type, &Nx.pow(&1, yt))
      assert_close(Nx.pow(gpu(x), gpu(yt)), want, type, "pow #{inspect(y)} #{inspect(type)}")
    end

    x = Nx.tensor([Complex.new(1.0, 2.0), Complex.new(-3.0, 0.5)], backend: Nx.BinaryBackend)
    r = Nx.tensor([3.0, 0.5], type: :f32, backend: Nx.BinaryBackend)
    assert_close(Nx.pow(gpu(x), gpu(r)), Nx.pow(x, r), {:c, 64}, "pow by a real tensor")
  end
end
