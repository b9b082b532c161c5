defmodule Nx.Vulkan.Backend.Call do
  @moduledoc false
  # One native call of Nx.Vulkan.Backend: the type names and device references it
  # passes, uploads of tensors from other backends, and `run/5`, which wraps the result
  # in the output template or turns an error into Nx's exception (an :unsupported answer
  # into the counted host fallback). Imported by the backend and its block runners.

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Native
  alias Nx.Vulkan.Backend.Fallback
  alias Nx.Vulkan.VulkanoBackend, as: Handle

  # Every op passes its output type's name: one clause per type, no string building.
  @doc false
  def type_name({:f8_e4m3fn, 8}), do: "f8_e4m3fn"

  for {kind, sizes} <- [u: [2, 4, 8, 16, 32, 64], s: [2, 4, 8, 16, 32, 64], f: [8, 16, 32, 64], bf: [16], c: [64, 128]],
      size <- sizes do
    def type_name({unquote(kind), unquote(size)}), do: unquote("#{kind}#{size}")
  end

  def type_name({kind, size}), do: "#{kind}#{size}"

  @doc false
  def shape_list(%T{shape: shape}), do: Tuple.to_list(shape)

  @doc false
  def wrap(%T{} = out, ref), do: %{out | data: %Handle{ref: ref}}

  def wrap(out, refs) when is_tuple(out),
    do: out |> Tuple.to_list() |> Enum.zip_with(refs, &wrap/2) |> List.to_tuple()

  # The device reference of a tensor argument; tensors of other backends are uploaded.
  @doc false
  def ref!(%T{data: %Handle{ref: ref}}), do: ref

  def ref!(%T{} = t) do
    case upload(Nx.to_binary(t), shape_list(t), type_name(t.type)) do
      {:ok, ref} -> ref
      {:error, {:unsupported, msg}} -> throw({:nx_vulkan_unsupported, msg})
      {:error, {kind, msg}} -> raise error_module(kind), msg
    end
  end

  # Sub-byte types (u2, u4, s2, s4) arrive as bitstrings: padded to whole bytes here, the
  # engine unpacks them (one byte per element on the device).
  @doc false
  def upload(data, shape, type) when is_binary(data), do: Native.t_from_binary(data, shape, type)

  def upload(data, shape, type) when is_bitstring(data) do
    pad = 8 - rem(bit_size(data), 8)
    Native.t_from_binary(<<data::bitstring, 0::size(pad)>>, shape, type)
  end

  @doc false
  def error_module(:invalid_argument), do: ArgumentError
  def error_module(:arithmetic), do: ArithmeticError
  def error_module(_), do: RuntimeError

  # The input tensors of a call (args without the output template), as `f32{2, 3}`.
  @doc false
  def describe([_out | args]) do
    args
    |> Enum.flat_map(fn
      %T{shape: s, type: t} -> ["#{type_name(t)}#{Kernel.inspect(s)}"]
      _ -> []
    end)
    |> Enum.join(", ")
  end

  # Runs one native call producing `out`; an :unsupported answer (or an argument that
  # cannot live on the device) goes to `unsupported` (by default the counted host
  # fallback).
  @doc false
  def run(op, args, out, fun, unsupported \\ nil) do
    result =
      try do
        fun.()
      catch
        {:nx_vulkan_unsupported, msg} -> {:error, {:unsupported, msg}}
      end

    case result do
      {:ok, ref} ->
        wrap(out, ref)

      {:error, {:unsupported, msg}} when unsupported != nil ->
        unsupported.(msg)

      {:error, {:unsupported, msg}} ->
        Fallback.call(op, args, msg)

      # Nx's own arithmetic errors keep Nx's message, as BinaryBackend raises them.
      {:error, {:arithmetic, msg}} ->
        raise ArithmeticError, msg

      {:error, {kind, msg}} ->
        raise error_module(kind), "Nx.Vulkan.Backend.#{op}(#{describe(args)}): #{msg}"
    end
  end
end
