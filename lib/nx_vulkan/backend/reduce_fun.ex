defmodule Nx.Vulkan.Backend.ReduceFun do
  @moduledoc false
  # `reduce/5` and `window_reduce/6` take an Elixir function. When the function is one
  # associative, commutative op of its two arguments (add, multiply, max, min,
  # logical_and, logical_or: what `Nx.reduce/4` is used for), the reduction runs as the
  # matching GPU reduction combined with the accumulator; any other function takes the
  # counted host fallback, which says so.

  @ops %{
    add: {:sum, :window_sum, :add},
    multiply: {:product, :window_product, :multiply},
    max: {:reduce_max, :window_max, :max},
    min: {:reduce_min, :window_min, :min},
    logical_and: {:all, nil, :logical_and},
    logical_or: {:any, nil, :logical_or}
  }

  @doc """
  The `{reduction, window_reduction, combine}` callbacks `fun` amounts to, traced on two
  scalars of `type`, or `:error` when it is anything else.
  """
  def classify(fun, type) do
    arg = Nx.template({}, type)
    %Nx.Tensor{data: %Nx.Defn.Expr{op: op, args: args}} = Nx.Defn.debug_expr(fun).(arg, arg)

    case {Map.fetch(@ops, op), Enum.map(args, &parameter/1)} do
      {{:ok, found}, params} when params in [[0, 1], [1, 0]] -> {:ok, found}
      _ -> :error
    end
  rescue
    _ -> :error
  end

  defp parameter(%Nx.Tensor{data: %Nx.Defn.Expr{op: :parameter, args: [i]}}), do: i
  defp parameter(_), do: nil

  @doc "Nx `reduce/5` through the GPU reduction `fun` amounts to, or `:error`."
  def reduce(out, tensor, acc, opts, fun) do
    with {:ok, {reduction, _, combine}} <- classify(fun, out.type) do
      reduced = apply(Nx.Vulkan.Backend, reduction, [out, tensor, opts])
      {:ok, combine(out, reduced, acc, combine)}
    end
  end

  @doc """
  Nx `window_reduce/6`: the tensor padded with the accumulator (as the host reduction
  pads), the window reduction with no padding, then the accumulator folded in once.
  """
  def window_reduce(out, tensor, acc, window_dimensions, opts, fun) do
    with {:ok, {_, window_op, combine}} when window_op != nil <- classify(fun, out.type) do
      config = Enum.map(opts[:padding], fn {lo, hi} -> {lo, hi, 0} end)
      padded = Nx.pad(Nx.as_type(tensor, out.type), Nx.as_type(acc, out.type), config)

      reduced =
        apply(Nx, window_op, [
          padded,
          window_dimensions,
          [strides: opts[:strides], window_dilations: opts[:window_dilations]]
        ])

      {:ok, combine(out, Nx.as_type(reduced, out.type), acc, combine)}
    else
      _ -> :error
    end
  end

  defp combine(out, reduced, acc, op) do
    acc = Nx.as_type(acc, out.type)
    apply(Nx.Vulkan.Backend, op, [out, reduced, acc])
  end
end
