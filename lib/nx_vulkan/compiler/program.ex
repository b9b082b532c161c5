defmodule Nx.Vulkan.Compiler.Program do
  @moduledoc false
  # A compiled function's calls as one native call each (issue 41, step 1).
  #
  # The first call of a compiled function (per process) runs it op by op through
  # Nx.Vulkan.Backend while the engine records every op it makes
  # (native/nx_vulkan/src/nif/program.rs). If nothing was read back from the device on the
  # way (a `while` or `cond` predicate, a host fallback, a bounds check, a dynamic slice
  # start) and every output is a device tensor, the recording becomes a program, and later
  # calls run it in one native call: the same engine ops on the new arguments, so results
  # are bit-identical. Otherwise the function keeps the op-by-op path, and
  # `Nx.Vulkan.stats/0` shows it (`native_calls` grows by more than one per call).

  alias Nx.Defn.{Composite, Expr, Tree}
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Native
  alias Nx.Vulkan.VulkanoBackend, as: Handle

  @recording {__MODULE__, :recording}

  @doc """
  Whether the traced `output` can be recorded: it calls back into Elixir at run time
  (hooks, `runtime_call`) in none of its expressions.
  """
  def recordable?(output) do
    {_, state} = Composite.traverse(output, {%{}, true}, &scan/2)
    elem(state, 1)
  end

  defp scan(%T{data: %Expr{id: id, op: op}} = t, {seen, ok}) do
    cond do
      not ok or Map.has_key?(seen, id) -> {t, {seen, ok}}
      op in [:hook, :token, :attach_token, :runtime_call] -> {t, {seen, false}}
      true -> Tree.apply_args(t, :all, {Map.put(seen, id, true), ok}, &scan/2)
    end
  end

  defp scan(other, acc), do: {other, acc}

  @doc """
  Calls `compiled` (an `Nx.Defn.Evaluator` compilation taking a list of argument lists)
  on one list of argument functions `args`, through the program kept under `key` in the
  process: recorded on the first call, replayed after.
  """
  def call(key, compiled, args) do
    tensors = Enum.map(args, & &1.())

    cond do
      # Inside another recording (its ops are recorded there), with host arguments, or in
      # the bounds-checked mode (whose checks read the indices on every call).
      Process.get(@recording, false) or not Enum.all?(tensors, &device?/1) or
          Nx.Vulkan.Backend.Checks.bounds_check?() ->
        eval(compiled, tensors)

      true ->
        case Process.get(key) do
          nil -> record(key, compiled, tensors)
          {:program, program, template} -> replay(program, template, tensors)
          {:not_recordable, _why} -> eval(compiled, tensors)
        end
    end
  end

  @doc "What `call/3` holds for `key` in the calling process (for tests and stats)."
  def state(key), do: Process.get(key)

  defp eval(compiled, tensors) do
    [result] = compiled.([Enum.map(tensors, &fn -> &1 end)])
    result
  end

  defp record(key, compiled, tensors) do
    {:ok, :ok} = Native.p_capture_begin(Enum.map(tensors, &ref/1))
    Process.put(@recording, true)

    result =
      try do
        eval(compiled, tensors)
      catch
        kind, reason ->
          Native.p_capture_abort()
          :erlang.raise(kind, reason, __STACKTRACE__)
      after
        Process.delete(@recording)
      end

    outputs = Composite.flatten_list([result])

    state =
      if Enum.all?(outputs, &device?/1) do
        case Native.p_capture_end(Enum.map(outputs, &ref/1)) do
          {:ok, program} -> {:program, program, result}
          {:error, {:not_recordable, why}} -> {:not_recordable, why}
          {:error, {_kind, why}} -> {:not_recordable, why}
        end
      else
        Native.p_capture_abort()
        {:not_recordable, "an output is not a device tensor"}
      end

    Process.put(key, state)
    result
  end

  defp replay(program, template, tensors) do
    case Native.p_run(program, Enum.map(tensors, &ref/1)) do
      {:ok, refs} ->
        {result, []} =
          Composite.traverse(template, refs, fn %T{} = t, [ref | rest] ->
            {%{t | data: %Handle{ref: ref}}, rest}
          end)

        result

      {:error, {kind, msg}} ->
        raise error_module(kind), "Nx.Vulkan.Compiler: #{msg}"
    end
  end

  defp error_module(:invalid_argument), do: ArgumentError
  defp error_module(:arithmetic), do: ArithmeticError
  defp error_module(_), do: RuntimeError

  defp device?(%T{data: %Handle{}}), do: true
  defp device?(_), do: false

  defp ref(%T{data: %Handle{ref: ref}}), do: ref
end
