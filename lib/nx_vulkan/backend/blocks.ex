defmodule Nx.Vulkan.Backend.Blocks do
  @moduledoc false
  # The `Nx.block/4` nodes that Nx.Vulkan.Compiler writes, as Nx.Vulkan.Backend runs
  # them: a fusion group (fused.comp) or a generated kernel, one launch each.

  import Nx.Vulkan.Backend.Call

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Native

  # A fusion group of Nx.Vulkan.Compiler: one kernel. Where the engine has none for it
  # (an f64 program on a device without f64) the block's default function runs the ops
  # one by one, each as a callback of this backend.
  @doc "Runs a fusion group (`Nx.Vulkan.Fused`) as one kernel."
  def fused(%Nx.Vulkan.Fused{} = f, %T{} = out, args, fun) do
    fused = fn ->
      refs = Enum.map(args, &ref!/1)

      with {:ok, ref} <- Native.t_fused(type_name(f.type), f.shape, f.row_axes, f.per_row, f.slots, refs),
           do: Native.t_reshape(ref, shape_list(out))
    end

    run(:block, [out | args], out, fused, fn _msg -> apply(fun, [f | args]) end)
  end

  # A generated kernel's group of Nx.Vulkan.Compiler: one launch, one tensor or a tuple
  # of them. Where the engine does not generate it, the block's default function runs the
  # ops one by one, each as a callback of this backend.
  @doc "Runs a generated kernel's group (`Nx.Vulkan.Generated`): one launch."
  def generated(%Nx.Vulkan.Generated{} = g, out, args, fun) do
    generated = fn ->
      refs = Enum.map(args, &ref!/1)
      views = Enum.map(g.views, fn {type, strides, offset} -> {type_name(type), strides, offset} end)
      nodes = Enum.map(g.nodes, fn {name, a, b, c, type, v} -> {name, a, b, c, type_name(type), v} end)

      case Native.t_generated(g.shape, g.reduce_axes, views, nodes, g.outputs, refs) do
        {:ok, refs} when g.reduce_axes != [] -> reshaped(refs, out)
        {:ok, [ref]} when is_struct(out, T) -> {:ok, ref}
        other -> other
      end
    end

    run(:block, [out | args], out, generated, fn _msg -> apply(fun, [g | args]) end)
  end

  # A generated reduction's outputs in the shapes of the block's (the engine gives a
  # reduction's without its folded axes; the bytes are the same).
  defp reshaped(refs, out) do
    outs = if is_struct(out, T), do: [out], else: Tuple.to_list(out)

    Enum.zip_with(refs, outs, fn ref, t -> Native.t_reshape(ref, shape_list(t)) end)
    |> Enum.reduce_while({:ok, []}, fn
      {:ok, ref}, {:ok, acc} -> {:cont, {:ok, [ref | acc]}}
      error, _ -> {:halt, error}
    end)
    |> case do
      {:ok, [ref]} when is_struct(out, T) -> {:ok, ref}
      {:ok, refs} -> {:ok, Enum.reverse(refs)}
      error -> error
    end
  end
end
