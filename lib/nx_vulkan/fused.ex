defmodule Nx.Vulkan.Fused do
  @moduledoc """
  A fused program: the ops of one fusion group of `Nx.Vulkan.Compiler`, run by
  `Nx.Vulkan.Backend` as one kernel.

  It travels through the expression as the struct of an `Nx.block/4` node, so any
  backend can run it: `Nx.Vulkan.Backend` calls the fused kernel, every other backend the
  block's default function, `evaluate/2`, which replays the same ops with `Nx`.

  Fields:

    * `:type` - the type every value has (`{:f, 32}` or `{:f, 64}`)
    * `:shape` - the domain (a list); its first `:row_axes` axes are rows, the other
      axes are folded by the reductions
    * `:per_row` - whether the result is one value per row
    * `:slots` - `{name, a, b, value}` per op, in order: `{"input", k, 0, 0}`,
      `{"constant", 0, 0, number}`, a unary op `{"exp", a, 0, 0}`, a binary op
      `{"add", a, b, 0}` or a reduction `{"sum", a, 0, 0}` (Nx names; `a` and `b` index
      earlier slots). The last slot is the result.
    * `:reduce_opts` - the Nx options of each reduction, by slot index (for `evaluate/2`)
    * `:constant_shapes` - the shape of each constant, by slot index (for `evaluate/2`;
      the kernel broadcasts every value to the domain anyway)
  """

  defstruct [:type, :shape, :row_axes, :per_row, :slots, reduce_opts: %{}, constant_shapes: %{}]

  @typedoc "A fused program."
  @type t :: %__MODULE__{}

  @reductions ~w(sum reduce_max reduce_min)
  @binary ~w(add subtract multiply divide max min)

  @doc """
  Runs the program op by op with `Nx` on `inputs` (any backend): the block's default
  implementation, and the reference the fused kernel is tested against.
  """
  @spec evaluate(t(), [Nx.Tensor.t()]) :: Nx.Tensor.t()
  def evaluate(%__MODULE__{slots: slots, type: type, reduce_opts: opts} = f, inputs) do
    regs =
      slots
      |> Enum.with_index()
      |> Enum.reduce(%{}, fn {slot, i}, regs ->
        v = value(slot, i, regs, inputs, type, opts)
        v = if shape = f.constant_shapes[i], do: Nx.broadcast(v, shape), else: v
        Map.put(regs, i, v)
      end)

    Map.fetch!(regs, length(slots) - 1)
  end

  defp value({"input", k, _, _}, _i, _regs, inputs, _type, _opts), do: Enum.at(inputs, k)
  defp value({"constant", _, _, v}, _i, _regs, _inputs, type, _opts), do: constant(v, type)

  defp value({name, a, _, _}, i, regs, _inputs, _type, opts) when name in @reductions,
    do: apply(Nx, String.to_existing_atom(name), [regs[a], Map.fetch!(opts, i)])

  defp value({name, a, b, _}, _i, regs, _inputs, _type, _opts) when name in @binary,
    do: apply(Nx, String.to_existing_atom(name), [regs[a], regs[b]])

  defp value({name, a, _, _}, _i, regs, _inputs, _type, _opts),
    do: apply(Nx, String.to_existing_atom(name), [regs[a]])

  # Constants live on Nx.BinaryBackend, which mixes with any backend and with defn
  # expressions (the default expression is built from this function too). Also the
  # constants of `Nx.Vulkan.Generated.evaluate/2`.
  @host [backend: Nx.BinaryBackend]
  @doc false
  def constant(:nan, type), do: Nx.Constants.nan(type, @host)
  def constant(:infinity, type), do: Nx.Constants.infinity(type, @host)
  def constant(:neg_infinity, type), do: Nx.Constants.neg_infinity(type, @host)
  def constant(v, type), do: Nx.tensor(v, [type: type] ++ @host)
end
