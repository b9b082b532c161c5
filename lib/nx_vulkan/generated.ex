defmodule Nx.Vulkan.Generated do
  @moduledoc """
  A group of element-wise ops, and reductions, that `Nx.Vulkan.Backend` runs as one
  generated kernel:
  SPIR-V built in-process for the group (`native/nx_vulkan/src/codegen`), in which each
  op runs the code of its own kernel, so the result is the ops' one by one.
  `Nx.Vulkan.Compiler` finds such groups in a `defn` expression.

  It travels through the expression as the struct of an `Nx.block/4` node, so any
  backend can run it: `Nx.Vulkan.Backend` launches the kernel, every other backend the
  block's default function, `evaluate/2`, which replays the ops with `Nx`.

  Fields:

    * `:shape` - the domain (a list): the result's shape, or the shape the reductions
      fold
    * `:reduce_axes` - the axes of the domain that the reductions fold (sorted; empty
      without reductions). A reduction node and the nodes that read only reductions and
      constants have one value per point of the other axes, which the element-wise
      nodes read as Nx broadcasts a reduction that keeps its axes
    * `:output_shapes` - each output's shape (a reduction's as the expression gives it,
      with or without its folded axes)
    * `:views` - how the kernel reads each input: `{type, strides, offset}`, the
      strides over the domain (0 where Nx broadcasts)
    * `:reads` - per input, the layout changes that the view reads it through, in
      order: `{:transpose, axes}` and `{:broadcast, shape, axes}` (Nx's arguments),
      so that no launch materialises them (empty: the input as it is)
    * `:nodes` - `{name, a, b, c, type, value}` per value, in order: `{"input", k, ...}`,
      `{"constant", _, _, _, type, number}`, a unary op `{"abs", a, ...}`, a binary op
      `{"add", a, b, ...}`, `{"select", pred, on_true, on_false, ...}`, a conversion
      `{"as_type", a, _, _, type, _}` or a reduction over `:reduce_axes`
      (`{"sum", a, ...}`, `"product"`, `"reduce_max"`, `"reduce_min"`) (Nx names; `a`,
      `b` and `c` index earlier nodes; `type` is the node's result type)
    * `:outputs` - the nodes whose values are the results: the block gives one tensor,
      or a tuple of them in this order where there are several
  """

  defstruct [:shape, :views, :nodes, :outputs, reads: [], reduce_axes: [], output_shapes: nil]

  # The ops a generated kernel runs (those whose kernels are the plain unary and binary
  # ones, and the math library's exp; its other functions, pow and atan2 are not
  # generated yet).
  @unary ~w(negate abs sign ceil floor round sqrt exp is_nan is_infinity bitwise_not)
  # (Shifts stay out: the backend raises on a negative shift amount before launching.)
  @binary ~w(add subtract multiply divide remainder quotient min max equal not_equal greater
             less greater_equal less_equal logical_and logical_or logical_xor bitwise_and
             bitwise_or bitwise_xor)
  @reductions ~w(sum product reduce_max reduce_min)
  @predicates ~w(equal not_equal greater less greater_equal less_equal logical_and logical_or
                 logical_xor is_nan is_infinity)

  @doc false
  def unary_ops, do: @unary
  @doc false
  def binary_ops, do: @binary
  @doc false
  def predicates, do: @predicates

  @typedoc "A generated kernel's group."
  @type t :: %__MODULE__{}

  @doc """
  Runs the group op by op with `Nx` on `inputs` (any backend): the block's default
  implementation.
  """
  @spec evaluate(t(), [Nx.Tensor.t()]) :: Nx.Tensor.t()
  def evaluate(%__MODULE__{nodes: nodes, outputs: outputs, reads: reads} = g, inputs) do
    inputs = Enum.with_index(inputs, fn input, k -> Enum.reduce(Enum.at(reads, k, []), input, &read/2) end)

    values =
      Enum.reduce(nodes, {}, fn node, values ->
        Tuple.insert_at(values, tuple_size(values), value(node, values, inputs, g.reduce_axes))
      end)

    results =
      case g.output_shapes do
        nil -> Enum.map(outputs, &elem(values, &1))
        shapes -> Enum.zip_with(outputs, shapes, &shaped(elem(values, &1), &2))
      end

    case results do
      [result] -> result
      results -> List.to_tuple(results)
    end
  end

  # An output in its block's shape: a reduction's without its kept axes, a value of
  # inputs that broadcast to the domain spread over it.
  defp shaped(%Nx.Tensor{shape: shape} = t, shape), do: t

  defp shaped(t, shape) do
    if Nx.size(t) == Tuple.product(shape), do: Nx.reshape(t, shape), else: Nx.broadcast(t, shape)
  end

  defp read({:transpose, axes}, t), do: Nx.transpose(t, axes: axes)
  defp read({:broadcast, shape, axes}, t), do: Nx.broadcast(t, shape, axes: axes)

  defp value({"input", k, _, _, _, _}, _values, inputs, _axes), do: Enum.at(inputs, k)
  defp value({"constant", _, _, _, type, v}, _values, _inputs, _axes), do: Nx.Vulkan.Fused.constant(v, type)

  defp value({"as_type", a, _, _, type, _}, values, _inputs, _axes), do: Nx.as_type(elem(values, a), type)

  defp value({"select", p, a, b, _, _}, values, _inputs, _axes),
    do: Nx.select(elem(values, p), elem(values, a), elem(values, b))

  # (Kept axes: the element-wise nodes read a reduction as Nx broadcasts it.)
  defp value({name, a, _, _, _, _}, values, _inputs, axes) when name in @reductions,
    do: apply(Nx, String.to_existing_atom(name), [elem(values, a), [axes: axes, keep_axes: true]])

  defp value({name, a, _, _, _, _}, values, _inputs, _axes) when name in @unary,
    do: apply(Nx, String.to_existing_atom(name), [elem(values, a)])

  defp value({name, a, b, _, _, _}, values, _inputs, _axes) when name in @binary,
    do: apply(Nx, String.to_existing_atom(name), [elem(values, a), elem(values, b)])
end
