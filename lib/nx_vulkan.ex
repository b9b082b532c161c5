defmodule Nx.Vulkan do
  @moduledoc """
  Nx on Vulkan compute: the GPU backend for every GPU that has a Vulkan driver.

      Nx.default_backend(Nx.Vulkan.Backend)
      Nx.add(Nx.tensor([1.0, 2.0]), 1.0)

  The device is the most capable one Vulkan offers (discrete > integrated > virtual > CPU);
  set `NX_VULKAN_DEVICE` to an index or a name substring to choose another. On a machine
  without a GPU, Mesa's lavapipe (`mesa-vulkan-drivers`) runs the same kernels on the CPU.

  Ops that have no Vulkan kernel yet run on `Nx.BinaryBackend` through one explicit,
  counted fallback path: see `fallback_stats/0` and `set_fallback/1`.
  """

  alias Nx.Vulkan.Native

  @doc """
  Opens the device (once per VM) and returns its name. Raises when no usable Vulkan
  device exists.
  """
  @spec init() :: String.t()
  def init, do: Native.device_name()

  @doc "The name of the device in use."
  @spec device_name() :: String.t()
  def device_name, do: init()

  @doc """
  A map describing the device: name, type, driver, API version, memory heaps, subgroup
  size, limits and which optional features (f16, f64, int64, int16, int8, 16-bit storage,
  cooperative matrix) it offers. `:cooperative_matrix_shapes` lists the cooperative-matrix
  products the driver offers (`"KHR 16x16x16 f16*f16+f32->f32"`: M x N x K, operand,
  accumulator and result types); `:cooperative_matrix_f16` and `:cooperative_matrix_bf16`
  say whether large f16 and bf16 matmuls run on them.
  """
  @spec device_info() :: map()
  def device_info, do: unwrap!(Native.dev_info(), "device_info")

  @doc """
  What this package runs on, in one map:

    * `:loader`: the Vulkan loader in use, e.g. `"system (libvulkan.so.1)"`, or
      `"MoltenVK (bundled, linked statically)"` on a Mac without the Vulkan SDK;
    * `:device`, `:type`, `:driver`, `:api_version`;
    * `:features`: `:f64` (shaderFloat64 and shaderInt64), `:int64`, `:cooperative_matrix`
      (the f16/bf16 matmul kernels run on tensor cores), `:f16_arithmetic` (the device's
      own f16 maths). f16 and bf16 tensors work on every device: they are computed in f32
      and rounded once, so `:f16` and `:bf16` are always true;
    * `:memory_heaps`: `%{size: bytes, device_local: boolean}` each;
    * `:disabled_features`: what `NX_VULKAN_DISABLE_FEATURES` switched off.

  Raises with what to install when there is no Vulkan loader or no device.
  """
  @spec info() :: map()
  def info do
    i = Native.started!(Native.dev_info())

    %{
      loader: i.loader,
      device: i.name,
      type: i.type,
      driver: i.driver,
      api_version: i.api_version,
      features: %{
        f64: i.f64 and i.int64,
        int64: i.int64,
        f16: true,
        bf16: true,
        f16_arithmetic: i.f16,
        cooperative_matrix: i.cooperative_matrix_f16 or i.cooperative_matrix_bf16
      },
      memory_heaps: i.heaps,
      disabled_features: i.disabled_features
    }
  end

  @doc """
  Memory and execution counters: live and pooled bytes, buffers created and reused,
  dispatches, small uploads carried in the command stream (`updates`), barriers, submits,
  host waits, pipelines built, native tensor calls (`native_calls`: ops and program runs),
  calls run on a dirty scheduler because the normal one would have blocked
  (`dirty_retries`), collections of the caller's garbage before a retry, where the pool
  had no idle buffer for a new tensor (`collects`), spare buffers made ahead of
  need (`spares_created`, see the README's memory notes),
  `Nx.Vulkan.Compiler`'s program replays (`program_runs`; `launch_list_runs` of them
  replayed the launches their first run captured instead of deciding each op again, and
  `recorded_list_runs` of those executed a list recorded once into a command buffer), the compiled functions it
  recorded as programs (`programs_recorded`) and its calls that ran op by op
  (`compiled_calls_op_by_op`: functions that read the device while they run or call back
  into Elixir, and calls in the bounds-checked mode).
  """
  @spec stats() :: map()
  def stats, do: Map.merge(unwrap!(Native.dev_stats(), "stats"), compiler_counters())

  # Nx.Vulkan.Compiler needs Nx; the native tests load this module without it.
  defp compiler_counters do
    if Code.ensure_loaded?(Nx.Vulkan.Compiler.Program),
      do: Nx.Vulkan.Compiler.Program.counters(),
      else: %{}
  end

  @doc """
  GPU time by kernel since the last call, when the VM started with
  `NX_VULKAN_PROFILE=1` (an empty list otherwise): waits for the recorded work, then
  returns `[{kernel, launches, microseconds}]`, largest first, and starts counting anew.

  Each batch of commands is bracketed by GPU timestamps, one after every command; a
  command's time is how much later its batch finished because of it, so the times add
  up to the GPU's busy time even where kernels overlap. Copies and uploads in the
  command stream are counted as `"copy or update"`. Profiling adds a timestamp per
  command; leave it off for benchmarks.
  """
  @spec profile() :: [{String.t(), non_neg_integer(), float()}]
  def profile, do: unwrap!(Native.dev_profile(), "profile")

  @doc "Waits until all GPU work recorded so far has finished."
  @spec synchronize() :: :ok
  def synchronize do
    unwrap!(Native.dev_synchronize(), "synchronize")
    :ok
  end

  @doc """
  How many times each op ran on the host instead of the GPU, as `%{op => count}`.
  """
  @spec fallback_stats() :: %{atom() => non_neg_integer()}
  defdelegate fallback_stats(), to: Nx.Vulkan.Backend.Fallback, as: :stats

  @doc "Resets the fallback counters."
  @spec reset_fallback_stats() :: :ok
  defdelegate reset_fallback_stats(), to: Nx.Vulkan.Backend.Fallback, as: :reset

  @doc """
  What happens when an op has no Vulkan kernel: `:warn` (default: run it on the host and
  log once per op), `:allow` (run it on the host, counted, no log) or `:raise` (raise an
  `ArgumentError` naming the op). Returns the previous mode.
  """
  @spec set_fallback(:warn | :allow | :raise) :: :warn | :allow | :raise
  defdelegate set_fallback(mode), to: Nx.Vulkan.Backend.Fallback, as: :set_mode

  @doc """
  Runs `fun` with the fallback mode `mode` (see `set_fallback/1`) for the calling process
  only, and returns its value: `with_fallback(:raise, fn -> ... end)` proves a block of
  work runs on the GPU, whatever the global mode.
  """
  @spec with_fallback(:warn | :allow | :raise, (() -> result)) :: result when result: term()
  defdelegate with_fallback(mode, fun), to: Nx.Vulkan.Backend.Fallback, as: :with_mode

  @doc """
  Runs `fun` with gather, `Nx.take`, indexed_put and indexed_add checking their indices
  for the calling process, and returns its value: an index outside the tensor raises
  `Nx.BinaryBackend`'s `ArgumentError` ("index 3 is out of bounds for axis 0 in shape
  {2, 2}") instead of being clamped to the nearest valid one, as EXLA and JAX do and this
  backend does by default. Each checked call reads its indices from the device.
  `config :nx_vulkan, bounds_check: true` turns the check on everywhere.
  """
  @spec with_bounds_check((() -> result)) :: result when result: term()
  def with_bounds_check(fun), do: Nx.Vulkan.Backend.Checks.with_bounds_check(true, fun)

  @doc """
  Runs `fun` and returns `{value, counts}`, where `counts` (`%{op => n}`) are the ops the
  calling process ran on the host through the fallback during `fun`.

      {_sum, counts} = Nx.Vulkan.count_fallbacks(fn -> Nx.sum(t) end)
      counts
      #=> %{}
  """
  @spec count_fallbacks((() -> result)) :: {result, %{atom() => pos_integer()}} when result: term()
  defdelegate count_fallbacks(fun), to: Nx.Vulkan.Backend.Fallback, as: :count

  defp unwrap!({:ok, v}, _op), do: v
  defp unwrap!({:error, {kind, msg}}, op), do: raise(RuntimeError, "Nx.Vulkan.#{op} failed (#{kind}): #{msg}")
end
