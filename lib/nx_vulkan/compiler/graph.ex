defmodule Nx.Vulkan.Compiler.Graph do
  @moduledoc false
  # The expression graph the Compiler's grouping passes plan on (Fusion for fused.comp,
  # Generation for generated kernels), and the rewrite that puts their blocks in.
  #
  # `build/1` gives the nodes by id, the ids of each node's users (`:output` for the
  # function's outputs) and the ids in consumers-first order. It throws `:unfusable`
  # for expressions with control flow or hooks (while, cond, fun, hook, runtime_call)
  # or vectorized axes, which the passes leave as they are.

  alias Nx.Defn.{Composite, Expr, Tree}
  alias Nx.Tensor, as: T

  @unfusable_scopes [:while, :cond, :fun, :hook, :runtime_call]

  @doc false
  def build(output) do
    acc = %{nodes: %{}, users: %{}, order: []}

    {_, acc} =
      Composite.traverse(output, acc, fn t, acc ->
        acc = visit(t, acc)
        {t, add_user(acc, t.data.id, :output)}
      end)

    acc
  end

  defp visit(%T{data: %Expr{id: id, op: op}} = t, acc) do
    cond do
      Map.has_key?(acc.nodes, id) ->
        acc

      op in @unfusable_scopes or t.vectorized_axes != [] ->
        throw(:unfusable)

      true ->
        acc = put_in(acc.nodes[id], t)

        {_, acc} =
          Tree.apply_args(t, :scope, acc, fn
            %T{data: %Expr{id: arg_id}} = arg, acc -> {arg, arg |> visit(acc) |> add_user(arg_id, id)}
            other, acc -> {other, acc}
          end)

        %{acc | order: [id | acc.order]}
    end
  end

  defp add_user(acc, id, user),
    do: update_in(acc.users, &Map.update(&1, id, MapSet.new([user]), fn s -> MapSet.put(s, user) end))

  @doc false
  # `output` with each group's root replaced by what `block.(root, group, rebuild)`
  # returns; `rebuild.(tensor, cache)` rebuilds a group's inputs the same way.
  def rewrite(output, groups, block) do
    {output, _} = Composite.traverse(output, %{}, &rebuild(&1, &2, groups, block))
    output
  end

  defp rebuild(%T{data: %Expr{id: id}} = t, cache, groups, block) do
    case cache do
      %{^id => new} ->
        {new, cache}

      %{} ->
        {new, cache} =
          case groups do
            %{^id => group} -> block.(t, group, cache, &rebuild(&1, &2, groups, block))
            %{} -> rebuild_args(t, cache, groups, block)
          end

        {new, Map.put(cache, id, new)}
    end
  end

  defp rebuild_args(t, cache, groups, block) do
    {args, cache} =
      Tree.apply_args(t, :scope, cache, fn
        %T{data: %Expr{}} = arg, cache -> rebuild(arg, cache, groups, block)
        other, cache -> {other, cache}
      end)

    {put_in(t.data.args, args), cache}
  end
end
