defmodule Nx.Vulkan.NativeV do
  @moduledoc """
  Low-level buffer calls kept for the published intro notebook.

  `buf_alloc/1` returns `{:ok, ref}` with an uninitialised device buffer of the given
  size in bytes; `buf_write/2` and `buf_read/1` move bytes in and out.
  """

  alias Nx.Vulkan.Native

  @doc "Allocates `bytes` bytes of device memory: `{:ok, ref}` or `{:error, reason}`."
  @spec buf_alloc(non_neg_integer()) :: {:ok, reference()} | {:error, term()}
  def buf_alloc(bytes) when is_integer(bytes) and bytes >= 0 do
    Native.announce()
    Native.t_alloc(bytes)
  end

  def buf_alloc(bytes),
    do: raise(ArgumentError, "buf_alloc expects a non-negative byte count, got: #{inspect(bytes)}")

  @doc "Uploads a binary into a new device buffer: `{:ok, ref}`."
  @spec buf_write(binary()) :: {:ok, reference()} | {:error, term()}
  def buf_write(binary) when is_binary(binary),
    do: Native.t_from_binary(binary, [byte_size(binary)], "u8")

  @doc "Reads a buffer back: `{:ok, binary}`."
  @spec buf_read(reference()) :: {:ok, binary()} | {:error, term()}
  def buf_read(ref), do: Native.t_to_binary(ref, nil)
end
