defmodule Nx.Vulkan.Compiler do
  @moduledoc """
  The `Nx.Defn.Compiler` of Nx.Vulkan: runs `defn` functions on `Nx.Vulkan.Backend`,
  with chains of element-wise ops and reductions over trailing axes fused into single
  kernels.

      Nx.Defn.default_options(compiler: Nx.Vulkan.Compiler)
      # or per function:
      fun = Nx.Defn.jit(&MyModel.softmax/1, compiler: Nx.Vulkan.Compiler)

  Arguments on other backends are copied to the device first; tensors the function
  creates live there too. Results are `Nx.Vulkan.Backend` tensors. Each process keeps
  the 64 most recently used compiled functions (by function, argument shapes and types,
  and options), so calling a jitted function again does not trace it again.

  ## Fusion

  A fusion group is a set of f32 or f64 ops among `negate abs exp log sqrt add subtract
  multiply divide max min` and `sum reduce_max reduce_min` over the last axes, whose
  intermediate values nothing outside the group reads. Softmax (`reduce_max`,
  `subtract`, `exp`, `sum`, `divide`) becomes one kernel that reads each row three
  times and writes it once, instead of five kernels and four intermediate tensors.
  Fusing changes no result: every op rounds as its own kernel does (f32 math follows
  `NX_VULKAN_F32_MATH`); only the order of a sum's additions can differ. Each distinct
  group builds one pipeline the first time it runs.

  A transpose that only swaps the two sides of a `dot`'s result (a dense layer's weight
  gradient) becomes the `dot` with its operands swapped, which reads a transposed operand
  in place: one launch instead of a copy, the product and a transpose, with the same
  bytes. (Not for f16, bf16 or complex dots, nor f32 ones whose sides are both at least
  128 and not both multiples of 4: the two orders would run on different kernels.)

  Other ops run one by one as `Nx.Vulkan.Backend` callbacks (`Nx.Defn.Evaluator` walks
  the expression) on a function's first call. That call is also recorded: later calls
  with the same argument shapes and types run the recorded ops in one native call
  (`Nx.Vulkan.stats/0` counts `native_calls` and `program_runs`), with the same results.
  A function that reads the device while it runs (a `while` or `cond` predicate, a host
  fallback, a bounds check, a dynamic slice start) or calls back into Elixir (hooks) keeps
  running op by op (`Nx.Vulkan.stats/0` counts such calls: `compiled_calls_op_by_op`).
  Expressions containing `while`, `cond`, hooks or vectorized axes are
  not fused yet: they run op by op.

  ## Options

    * `:fuse` - `false` turns fusion, generated kernels and the swapped dots off
      (default `true`)
    * `:generate` - `false` turns generated kernels off, keeping fusion (default `true`)
    * `:record` - `false` runs every call op by op, without recording (default `true`)

  Other options are `Nx.Defn.Evaluator`'s.
  """

  @behaviour Nx.Defn.Compiler

  alias Nx.Defn.{Composite, Expr, Tree}
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Backend.Fallback
  alias Nx.Vulkan.Compiler.{DotTransposes, Fusion, Generation, Program}

  # Compiled functions kept per process, by function, argument templates and options:
  # a call that hits skips tracing, fusion planning and the evaluator's preparation.
  @cache_size 64

  @impl true
  def __jit__(key, vars, fun, args_list, opts) do
    templates = Enum.map(vars, &Nx.Defn.Composite.traverse(&1, fn t -> Nx.to_template(t) end))
    compiled = cached({key, templates, opts}, fn -> __compile__(key, vars, fun, opts) end)
    compiled.(args_list)
  end

  # The compiled function under `cache_key`, built by `build` on a miss. The cache holds
  # @cache_size entries per process; when full, the least recently used one goes.
  defp cached(cache_key, build) do
    case Process.get(__MODULE__, {%{}, 0}) do
      {%{^cache_key => {compiled, _}} = entries, tick} ->
        Process.put(__MODULE__, {Map.put(entries, cache_key, {compiled, tick}), tick + 1})
        compiled

      _ ->
        compiled = build.()
        # Read again: building may have jitted (and cached) other functions.
        {entries, tick} = Process.get(__MODULE__, {%{}, 0})
        entries = if map_size(entries) >= @cache_size, do: evict_oldest(entries), else: entries
        Process.put(__MODULE__, {Map.put(entries, cache_key, {compiled, tick}), tick + 1})
        compiled
    end
  end

  defp evict_oldest(entries) do
    {oldest, _} = Enum.min_by(entries, fn {_key, {_compiled, used}} -> used end)
    Map.delete(entries, oldest)
  end

  @impl true
  def __compile__(key, vars, fun, opts) do
    {fuse?, opts} = Keyword.pop(opts, :fuse, true)
    {generate?, opts} = Keyword.pop(opts, :generate, true)
    {record?, opts} = Keyword.pop(opts, :record, true)
    generate? = fuse? and generate?
    transposes = if fuse?, do: &DotTransposes.rewrite/1, else: & &1
    fusion = if fuse?, do: &Fusion.rewrite(&1, leave_generatable: generate?), else: & &1
    generation = if generate?, do: &Generation.rewrite/1, else: & &1
    rewrite = &(&1 |> transposes.() |> fusion.() |> generation.())
    # The program of this compilation lives in each calling process under its own key.
    program_key = {Program, make_ref()}

    fun = fn vars ->
      output = vars |> fun.() |> constants_on_device() |> rewrite.()
      Process.put(program_key, Program.recordable?(output))
      output
    end

    compiled =
      Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
        Nx.Defn.Evaluator.__compile__(key, vars, fun, opts)
      end)

    # Traced by now: a function that calls back into Elixir is never recorded.
    recordable? = record? and Process.delete(program_key) == true

    fn args_list ->
      Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
        case Enum.map(args_list, fn args -> Enum.map(args, &on_device/1) end) do
          [args] when recordable? -> [Program.call(program_key, compiled, args)]
          args_list -> compiled.(args_list)
        end
      end)
    end
  end

  @impl true
  def __partitions_options__(opts), do: Nx.Defn.Evaluator.__partitions_options__(opts)

  @impl true
  def __to_backend__(_opts), do: {Nx.Vulkan.Backend, []}

  @impl true
  def __shard_jit__(_key, _mesh, _vars, _fun, _args_list, _opts) do
    raise ArgumentError, "Nx.Vulkan.Compiler does not support sharding"
  end

  # Host tensors the traced function holds as constants (`Nx.tensor(..., backend:
  # Nx.Defn.Expr)` builds them on Nx.BinaryBackend) are uploaded once, at compile time,
  # so that every op sees device tensors: an op that dispatches on its first argument
  # alone (`Nx.take/3` on a constant table) would otherwise run on the host with device
  # indices. Types the device cannot hold stay on the host.
  defp constants_on_device(output) do
    {output, _seen} = Composite.traverse(output, %{}, &constant_on_device/2)
    output
  end

  # The rebuilt node is remembered by id as its data alone: one node can be seen through
  # tensors of other shapes or vectorized axes (grad's vectorized terms), each of which
  # keeps its own.
  defp constant_on_device(%T{data: %Expr{id: id} = expr} = t, seen) do
    case seen do
      %{^id => data} ->
        {%{t | data: data}, seen}

      _ ->
        {args, seen} =
          case expr do
            %Expr{op: :tensor, args: [%T{data: %Nx.BinaryBackend{}} = host]} -> {[Fallback.to_device(host)], seen}
            _ -> Tree.apply_args(t, :all, seen, &constant_on_device/2)
          end

        data = %{expr | args: args}
        {%{t | data: data}, Map.put(seen, id, data)}
    end
  end

  defp constant_on_device(other, seen), do: {other, seen}

  # Parameters arrive as functions returning tensors; ours are device tensors.
  defp on_device(fun) when is_function(fun, 0) do
    fn ->
      case fun.() do
        %Nx.Tensor{data: %Nx.Vulkan.VulkanoBackend{}} = t -> t
        %Nx.Tensor{} = t -> Nx.backend_copy(t, Nx.Vulkan.Backend)
        other -> other
      end
    end
  end
end
