defmodule Nx.Vulkan.Compiler.DotTransposes do
  @moduledoc false
  # A pass of Nx.Vulkan.Compiler, before fusion: `transpose(dot(a, b))` that only swaps
  # the dot's two blocks of free axes becomes `dot(b, a)`, one launch instead of two.
  # Gradients of dense layers are this (`x^T dy` then a transpose back to the kernel's
  # layout); `dot` reads the transposed operand in place (ops/dot.rs).
  #
  # Each result element is then the same sum of the same products in the same order
  # (products and fma commute in their factors), so the bytes do not change, where both
  # orders run on the same kernel: the tiled kernels' tiles are square and each output's
  # K loop is the same either way. The f32 register-blocked kernel (sgemm.comp) needs the
  # output's last axis to be a multiple of 4 and both sides at least 128, so an f32 dot
  # swaps only where its sides are both multiples of 4 or either is under 128. Halves
  # (cooperative-matrix kernels, whose tiles are not square) and complex numbers are left
  # as they are. A dot that something other than the transpose reads is left too (it
  # would run twice).

  alias Nx.Defn.Expr
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Compiler.Graph

  @sgemm_min 128

  @doc false
  # The expression with each swappable transpose-of-dot replaced by the swapped dot.
  def rewrite(output) do
    graph = Graph.build(output)

    swaps =
      for {id, %T{data: %Expr{op: :transpose, args: [dot, axes]}}} <- graph.nodes,
          swappable?(dot, axes, graph),
          into: %{},
          do: {id, dot}

    if swaps == %{}, do: output, else: Graph.rewrite(output, swaps, &swapped/4)
  catch
    :unfusable -> output
  end

  defp swappable?(%T{data: %Expr{id: id, op: :dot, args: args}} = dot, axes, graph) do
    [a, contract_a, batch_a, b, _contract_b, _batch_b] = args
    batch = length(batch_a)
    free_a = tuple_size(a.shape) - length(contract_a) - batch
    free_b = tuple_size(b.shape) - length(batch_a) - length(contract_a)
    swap = Enum.to_list(0..(batch - 1)//1) ++ range(batch + free_a, free_b) ++ range(batch, free_a)

    axes == swap and axes != Enum.to_list(0..(tuple_size(dot.shape) - 1)//1) and
      MapSet.size(graph.users[id]) == 1 and same_kernel?(dot, a, b, batch, free_a)
  end

  defp swappable?(_other, _axes, _graph), do: false

  defp range(_from, 0), do: []
  defp range(from, count), do: Enum.to_list(from..(from + count - 1))

  defp same_kernel?(dot, a, b, batch, free_a) do
    types = [dot.type, a.type, b.type]
    dims = Tuple.to_list(dot.shape) |> Enum.drop(batch)
    {m, n} = {dims |> Enum.take(free_a) |> Enum.product(), dims |> Enum.drop(free_a) |> Enum.product()}

    cond do
      Enum.any?(types, fn {kind, size} -> kind in [:c, :bf] or (kind == :f and size <= 16) end) -> false
      dot.type != {:f, 32} -> true
      min(m, n) < @sgemm_min -> true
      true -> rem(m, 4) == 0 and rem(n, 4) == 0
    end
  end

  defp swapped(transpose, %T{data: %Expr{args: [a, ca, ba, b, cb, bb]}}, cache, rebuild) do
    {a, cache} = rebuild.(a, cache)
    {b, cache} = rebuild.(b, cache)
    expr = %Expr{id: Expr.id(), op: :dot, args: [b, cb, bb, a, ca, ba], context: transpose.data.context}
    {%{transpose | data: expr}, cache}
  end
end
