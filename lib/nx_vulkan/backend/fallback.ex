defmodule Nx.Vulkan.Backend.Fallback do
  @moduledoc """
  The one path by which an op runs on the host instead of the GPU.

  An op lands here when it has no Vulkan kernel yet, or when its types have none on this
  device (for example complex numbers, or `triangular_solve`). Its tensor
  arguments are downloaded, `Nx.BinaryBackend` computes the result, and the result is
  uploaded again (types the device cannot hold stay on `Nx.BinaryBackend`).

  Every use is counted (`Nx.Vulkan.fallback_stats/0`). The mode, set with
  `Nx.Vulkan.set_fallback/1` or `config :nx_vulkan, fallback: ...`, decides the rest:
  `:warn` (default) logs the first use of each op, `:allow` stays quiet and `:raise`
  raises an `ArgumentError`, which is how the test suites prove that ops run on the GPU.
  """

  require Logger

  alias Nx.Tensor, as: T

  @table :nx_vulkan_fallback_counts

  @doc false
  def set_mode(mode) when mode in [:warn, :allow, :raise] do
    previous = mode()
    :persistent_term.put({__MODULE__, :mode}, mode)
    previous
  end

  def set_mode(other),
    do: raise(ArgumentError, "fallback mode must be :warn, :allow or :raise, got: #{inspect(other)}")

  @doc false
  def mode do
    Process.get({__MODULE__, :mode}) || :persistent_term.get({__MODULE__, :mode}, nil) ||
      Application.get_env(:nx_vulkan, :fallback, :warn)
  end

  @doc false
  # `fun` with the mode set to `mode` for the calling process only.
  def with_mode(mode, fun) when mode in [:warn, :allow, :raise] and is_function(fun, 0) do
    previous = Process.put({__MODULE__, :mode}, mode)

    try do
      fun.()
    after
      if previous, do: Process.put({__MODULE__, :mode}, previous), else: Process.delete({__MODULE__, :mode})
    end
  end

  def with_mode(mode, _fun),
    do: raise(ArgumentError, "fallback mode must be :warn, :allow or :raise, got: #{inspect(mode)}")

  @doc false
  # `{fun's value, %{op => count}}`: the host fallbacks the calling process made in `fun`
  # (nested scopes each see their own and add them to the enclosing one).
  def count(fun) when is_function(fun, 0) do
    outer = Process.put({__MODULE__, :scope}, %{})

    try do
      value = fun.()
      {value, Process.get({__MODULE__, :scope})}
    after
      inner = Process.get({__MODULE__, :scope}, %{})

      if outer,
        do: Process.put({__MODULE__, :scope}, Map.merge(outer, inner, fn _, a, b -> a + b end)),
        else: Process.delete({__MODULE__, :scope})
    end
  end

  @doc false
  def stats do
    ensure_table()
    @table |> :ets.tab2list() |> Map.new()
  end

  @doc false
  def reset do
    ensure_table()
    :ets.delete_all_objects(@table)
    :ok
  end

  # Owned by a process that never exits, so counts survive the caller.
  defp ensure_table, do: Nx.Vulkan.Table.ensure(@table, [:set, write_concurrency: true])

  @doc """
  Runs `Nx.BinaryBackend.<op>(args...)` for a Vulkan callback, counting it and honouring
  the mode. `reason` says why the GPU could not run it.
  """
  def call(op, args, reason) do
    ensure_table()
    count = :ets.update_counter(@table, op, {2, 1}, {op, 0})

    if scope = Process.get({__MODULE__, :scope}),
      do: Process.put({__MODULE__, :scope}, Map.update(scope, op, 1, &(&1 + 1)))

    case mode() do
      :raise ->
        raise ArgumentError,
              "Nx.Vulkan.Backend.#{op} would run on the host (#{reason}) and the fallback mode is :raise"

      :warn when count == 1 ->
        Logger.warning(
          "Nx.Vulkan: #{op} runs on the host via Nx.BinaryBackend (#{reason}); counted in Nx.Vulkan.fallback_stats/0"
        )

      _ ->
        :ok
    end

    # BinaryBackend is the default while it runs: a user function it calls (Nx.reduce/4's)
    # must build host tensors, which BinaryBackend can read.
    host_args = Enum.map(args, &to_host/1)

    Nx.with_default_backend(Nx.BinaryBackend, fn -> apply(Nx.BinaryBackend, op, host_args) end)
    |> to_device()
  end

  defp to_host(%T{data: %{__struct__: Nx.Vulkan.VulkanoBackend}} = t) do
    bin = Nx.Vulkan.Backend.to_binary(t, Nx.size(t))
    %{t | data: %Nx.BinaryBackend{state: bin}}
  end

  defp to_host(list) when is_list(list), do: Enum.map(list, &to_host/1)
  defp to_host(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> Enum.map(&to_host/1) |> List.to_tuple()
  defp to_host(other), do: other

  @doc false
  # A host tensor (or a list or tuple of them) uploaded; types the device cannot hold
  # (complex on a device without f64, f8...) stay on the host.
  def to_device(%T{data: %Nx.BinaryBackend{state: bin}} = t) do
    # Sub-byte types (u2, u4, s2, s4) are bitstrings: padded to whole bytes.
    bin = if is_binary(bin), do: bin, else: <<bin::bitstring, 0::size(8 - rem(bit_size(bin), 8))>>

    case Nx.Vulkan.Native.t_from_binary(bin, Tuple.to_list(t.shape), Nx.Vulkan.Backend.type_name(t.type)) do
      {:ok, ref} ->
        %{t | data: struct(Nx.Vulkan.VulkanoBackend, ref: ref)}

      # A type the device cannot hold (complex, f8...) stays on the host.
      {:error, {:unsupported, _}} ->
        t

      {:error, {kind, msg}} ->
        raise RuntimeError, "Nx.Vulkan: uploading a host fallback result failed (#{kind}): #{msg}"
    end
  end

  def to_device(list) when is_list(list), do: Enum.map(list, &to_device/1)
  def to_device(tuple) when is_tuple(tuple), do: tuple |> Tuple.to_list() |> Enum.map(&to_device/1) |> List.to_tuple()
  def to_device(other), do: other
end
