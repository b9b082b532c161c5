defmodule Nx.Vulkan.DotTransposesTest do
  # A transpose that swaps the sides of a dot's result runs as the dot with its operands
  # swapped (Nx.Vulkan.Compiler.DotTransposes), reading the transposed operand in place:
  # one launch instead of a copy, the product and a transpose, and the Evaluator's bytes.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  import Nx.Defn

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  # A dense layer's weight gradient, as Nx's grad writes it: x^T dy, then transposed back.
  defn(weight_grad(x, dy), do: Nx.transpose(Nx.dot(x, [0], dy, [0])))

  # The same with a batch axis and two free axes on one side.
  defn(batched_grad(x, dy), do: Nx.transpose(Nx.dot(x, [1], [0], dy, [1], [0]), axes: [0, 3, 1, 2]))

  # The dot read elsewhere too: left as it is (swapping would compute it twice).
  defn(shared_product(x, dy), do: {Nx.transpose(Nx.dot(x, [0], dy, [0])), Nx.dot(x, [0], dy, [0])})

  defp launches(fun, args), do: Nx.Vulkan.NxHelpers.compiled_launches(fun, args)

  defp data(shape, type, seed) do
    {t, _} = Nx.Random.normal(Nx.Random.key(seed), shape: shape, type: type)
    Nx.backend_transfer(t, Nx.Vulkan.Backend)
  end

  defp assert_same_bytes(got, want) do
    for {g, w} <- Enum.zip(List.wrap(got), List.wrap(want)) do
      assert g.type == w.type and g.shape == w.shape
      assert Nx.to_binary(g) == Nx.to_binary(w), "#{inspect(g)} vs #{inspect(w)}"
    end
  end

  test "a weight gradient is one launch with the Evaluator's bytes" do
    # {x, dy, launches}: sgemm.comp both ways (Axon's 784-128 layer), the tiled kernel
    # (small: f64 sums), f64; f32 sides of 130 and 256 stay as they are (the two orders
    # would take different kernels): copy, product, transpose.
    cases = [
      {{128, 784}, {128, 128}, {:f, 32}, 1},
      {{128, 128}, {128, 10}, {:f, 32}, 1},
      {{40, 33}, {40, 7}, {:f, 64}, 1},
      {{64, 130}, {64, 256}, {:f, 32}, 3}
    ]

    for {{xs, dys, type, expected}, i} <- Enum.with_index(cases) do
      args = [data(xs, type, 2 * i), data(dys, type, 2 * i + 1)]
      {got, n} = launches(&weight_grad/2, args)
      assert_same_bytes(got, apply(Nx.Defn.jit(&weight_grad/2, compiler: Nx.Defn.Evaluator), args))
      assert n == expected, "#{inspect(xs)} x #{inspect(dys)} #{inspect(type)}: #{n} launches"
    end
  end

  test "batched and multi-axis products swap; a shared product does not" do
    args = [data({3, 16, 4, 5}, {:f, 32}, 7), data({3, 16, 6}, {:f, 32}, 8)]
    {got, n} = launches(&batched_grad/2, args)
    assert_same_bytes(got, apply(Nx.Defn.jit(&batched_grad/2, compiler: Nx.Defn.Evaluator), args))
    assert n == 1

    args = [data({32, 20}, {:f, 32}, 9), data({32, 12}, {:f, 32}, 10)]
    {got, n} = launches(&shared_product/2, args)
    want = apply(Nx.Defn.jit(&shared_product/2, compiler: Nx.Defn.Evaluator), args)
    assert_same_bytes(Tuple.to_list(got), Tuple.to_list(want))
    # The product once (its left operand read in place), and the transpose.
    assert n == 2
  end
end
