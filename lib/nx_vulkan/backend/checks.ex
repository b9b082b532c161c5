defmodule Nx.Vulkan.Backend.Checks do
  @moduledoc false
  # Checks on operands whose values decide whether Nx raises. Each costs a read from the
  # device, so the ones Nx's semantics need always run (shifts, rare), and the bounds
  # check of indices runs only in the bounds-checked mode (`Nx.Vulkan.with_bounds_check/1`,
  # `config :nx_vulkan, bounds_check: true`): otherwise out-of-range indices are clamped,
  # as EXLA and JAX do.

  alias Nx.Tensor, as: T

  @key {__MODULE__, :bounds_check}

  @doc false
  # Raises Nx's ArgumentError when a signed shift amount is negative ("cannot left shift by
  # -1"): on the host when the operand lives there, else one `any` read from the device
  # (and the whole operand only when one is negative, to name the first).
  def shift!(dir, %T{type: {:s, _}} = b) do
    negative? =
      case b.data do
        %Nx.Vulkan.VulkanoBackend{} -> Nx.to_number(Nx.any(Nx.less(b, 0))) == 1
        _ -> true
      end

    with true <- negative?, n when n != nil <- Enum.find(Nx.to_flat_list(b), &(&1 < 0)) do
      raise ArgumentError, "cannot #{dir} shift by #{n}"
    end

    :ok
  end

  def shift!(_dir, _b), do: :ok

  @doc false
  # Whether gather, indexed_put and indexed_add check their indices (process first, then
  # the application's config).
  def bounds_check? do
    case Process.get(@key) do
      nil -> Application.get_env(:nx_vulkan, :bounds_check, false)
      on -> on
    end
  end

  @doc false
  def with_bounds_check(on, fun) when is_boolean(on) and is_function(fun, 0) do
    previous = Process.get(@key)
    Process.put(@key, on)

    try do
      fun.()
    after
      if previous == nil, do: Process.delete(@key), else: Process.put(@key, previous)
    end
  end

  @doc false
  # In the bounds-checked mode: raises Nx.BinaryBackend's ArgumentError for the first index
  # (in row order, then axis order) outside `target`'s shape, as
  # "index 3 is out of bounds for axis 0 in shape {2, 2}".
  def indices!(%T{shape: shape}, %T{} = indices, axes) do
    if bounds_check?() do
      width = elem(indices.shape, tuple_size(indices.shape) - 1)
      axes = axes || Enum.to_list(0..(width - 1)//1)
      dims = Enum.map(axes, &elem(shape, &1))

      indices
      |> Nx.to_flat_list()
      |> Enum.chunk_every(max(width, 1))
      |> Enum.each(fn row ->
        Enum.zip_with([row, axes, dims], fn [i, axis, dim] ->
          if i < 0 or i >= dim,
            do: raise(ArgumentError, "index #{i} is out of bounds for axis #{axis} in shape #{inspect(shape)}")
        end)
      end)
    end

    :ok
  end
end
