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

  # The counters that `counters/0` reports. (Programs live in their process's dictionary,
  # as Nx.Vulkan.Compiler's compiled functions do: an ETS table would copy the compiled
  # function's expression graph without its sharing, exponentially large.)
  @table __MODULE__

  defp table, do: Nx.Vulkan.Table.ensure(@table, [:set, read_concurrency: true, write_concurrency: true])

  @doc """
  Counters for `Nx.Vulkan.stats/0`: `programs_recorded` (compiled functions recorded as
  programs) and `compiled_calls_op_by_op` (calls of compiled functions that ran op by op:
  functions that cannot be recorded, and calls in the bounds-checked mode).
  """
  def counters do
    t = table()

    for name <- [:programs_recorded, :compiled_calls_op_by_op], into: %{} do
      case :ets.lookup(t, {:counter, name}) do
        [{_, n}] -> {name, n}
        [] -> {name, 0}
      end
    end
  end

  defp count(name), do: :ets.update_counter(table(), {:counter, name}, {2, 1}, {{:counter, name}, 0})

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
  on one list of argument functions `args` (Nx's lazy parameters), through the program
  kept under `key` in the process: recorded on the first call, replayed after.
  """
  def call(key, compiled, args) do
    cond do
      # Inside another recording (its ops are recorded there): op by op, arguments as
      # lazy as Nx.Defn.Evaluator keeps them.
      Process.get(@recording, false) ->
        eval(compiled, args)

      # The bounds-checked mode's checks read the indices on every call.
      Nx.Vulkan.Backend.Checks.bounds_check?() ->
        op_by_op(compiled, args)

      true ->
        case Process.get(key) do
          {:program, _, _, used} = state ->
            # Exactly the arguments the recording evaluated (the others stay unevaluated).
            tensors = Enum.map(Enum.with_index(args), fn {fun, i} -> if(MapSet.member?(used, i), do: fun.()) end)

            if Enum.all?(tensors, &(&1 == nil or device?(&1))),
              do: replay(state, tensors),
              else: op_by_op(compiled, Enum.zip_with(args, tensors, fn fun, t -> if t, do: fn -> t end, else: fun end))

          nil ->
            record(key, compiled, args)

          _not_recordable ->
            op_by_op(compiled, args)
        end
    end
  end

  @doc "What `call/3` holds for `key` in the calling process (for tests and stats)."
  def state(key), do: Process.get(key)

  defp op_by_op(compiled, args) do
    count(:compiled_calls_op_by_op)
    eval(compiled, args)
  end

  defp eval(compiled, args) do
    [result] = compiled.([args])
    result
  end

  # Runs the function op by op while the engine records it. Each argument is named to the
  # recording when the function first evaluates it (one it never evaluates is never
  # evaluated on a replay either); one that is not a device tensor makes the function
  # unrecordable.
  defp record(key, compiled, args) do
    {:ok, :ok} = Native.p_capture_begin(length(args))
    Process.put(@recording, true)
    seen = {__MODULE__, :seen, make_ref()}
    Process.put(seen, %{})

    lazy =
      args
      |> Enum.with_index()
      |> Enum.map(fn {fun, i} ->
        fn ->
          # Once per argument: a second evaluation could give another tensor.
          case Process.get(seen) do
            %{^i => {_, t}} ->
              t

            evaluated ->
              t = fun.()
              if device?(t), do: Native.p_capture_input(i, ref(t))
              Process.put(seen, Map.put(evaluated, i, {device?(t), t}))
              t
          end
        end
      end)

    result =
      try do
        eval(compiled, lazy)
      catch
        kind, reason ->
          Native.p_capture_abort()
          :erlang.raise(kind, reason, __STACKTRACE__)
      after
        Process.delete(@recording)
      end

    outputs = Composite.flatten_list([result])
    evaluated = Process.delete(seen)

    state =
      cond do
        not Enum.all?(Map.values(evaluated), &elem(&1, 0)) or not Enum.all?(outputs, &device?/1) ->
          Native.p_capture_abort()
          {:not_recordable, "an argument or output is not a device tensor"}

        true ->
          case Native.p_capture_end(Enum.map(outputs, &ref/1)) do
            {:ok, program} ->
              count(:programs_recorded)
              # The outputs' shapes and types, not the first call's tensors (kept alive).
              template = Composite.traverse(result, &Nx.to_template/1)
              {:program, program, template, MapSet.new(Map.keys(evaluated))}

            {:error, {_kind, why}} ->
              {:not_recordable, why}
          end
      end

    Process.put(key, state)
    result
  end

  defp replay({:program, program, template, _used}, tensors) do
    case Native.p_run(program, Enum.map(tensors, &(&1 && ref(&1)))) do
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
