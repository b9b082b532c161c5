defmodule Nx.Vulkan.Node do
  @moduledoc """
  A process that runs GPU work one job at a time, under a watchdog: the seed package's
  `Nx.Vulkan.Node`, whose contract eXMC's `:gpu_node` mode uses.

      {:ok, _pid} = Nx.Vulkan.Node.start_link()
      Nx.Vulkan.Node.with_node(fn -> Nx.Vulkan.Native.device_name() end)
      #=> "NVIDIA H200"

  Each `with_node/1` job runs in a fresh process that the node monitors, so a job that
  raises or exits leaves the node running, and a job that outlives its time limit is
  killed and answered with `{:error, :node_timeout}`: the caller never hangs on a stuck
  job, and the node's own process never blocks (GPU work runs on dirty schedulers). A job
  killed inside a NIF ends when that call returns; the next job starts after it is gone,
  so jobs run one at a time and in arrival order. The limit is the `:timeout_ms` option of `start_link/1`, else
  `config :nx_vulkan, node_timeout_ms: ms` (default 60 s), or `:infinity`.

  At start the node opens the device and loads the persisted pipeline cache
  (`Nx.Vulkan.PipelineCache`, unless `load_pipeline_cache: false`); when it stops it
  persists the cache.
  """

  use GenServer
  require Logger

  @default_timeout_ms 60_000

  @doc """
  Starts the node, registered under `opts[:name]` (default `Nx.Vulkan.Node`). Options:
  `:name`, `:timeout_ms` (per job), `:load_pipeline_cache` (default `true`).
  """
  @spec start_link(keyword()) :: GenServer.on_start()
  def start_link(opts \\ []), do: GenServer.start_link(__MODULE__, opts, name: Keyword.get(opts, :name, __MODULE__))

  @doc "Whether a node is running under `name`."
  @spec alive?(GenServer.name()) :: boolean()
  def alive?(name \\ __MODULE__) do
    case GenServer.whereis(name) do
      pid when is_pid(pid) -> Process.alive?(pid)
      _ -> false
    end
  end

  @doc """
  Runs `fun` on the node and returns its value. A job past the node's time limit gives
  `{:error, :node_timeout}`; one that raises, throws or exits gives
  `{:error, {:job_failed, {kind, reason}}}` (`kind` as in `catch kind, reason`); a node
  that is not running (or stops meanwhile) gives `{:error, :node_dead}`.
  """
  @spec with_node((() -> result), GenServer.name()) :: result | {:error, term()} when result: term()
  def with_node(fun, name \\ __MODULE__) when is_function(fun, 0) do
    GenServer.call(name, {:exec, fun}, :infinity)
  catch
    :exit, _ -> {:error, :node_dead}
  end

  @doc """
  The node's counters: `:uptime_ms`, `:exec_count` (jobs finished), `:timeouts`,
  `:failures`, `:queued`, `:running`, `:timeout_ms` and `:device`.
  """
  @spec status(GenServer.name()) :: map()
  def status(name \\ __MODULE__), do: GenServer.call(name, :status)

  ## Server

  @impl true
  def init(opts) do
    Process.flag(:trap_exit, true)
    timeout = Keyword.get(opts, :timeout_ms, Application.get_env(:nx_vulkan, :node_timeout_ms, @default_timeout_ms))
    device = Nx.Vulkan.Native.device_name()
    if Keyword.get(opts, :load_pipeline_cache, true), do: Nx.Vulkan.PipelineCache.load()

    state = %{
      started_at: System.monotonic_time(:millisecond),
      timeout: timeout,
      device: device,
      queue: :queue.new(),
      running: nil,
      exec_count: 0,
      timeouts: 0,
      failures: 0
    }

    {:ok, state}
  end

  @impl true
  def handle_call({:exec, fun}, from, state) do
    {:noreply, state |> Map.update!(:queue, &:queue.in({fun, from}, &1)) |> next()}
  end

  def handle_call(:status, _from, state) do
    status = %{
      uptime_ms: System.monotonic_time(:millisecond) - state.started_at,
      exec_count: state.exec_count,
      timeouts: state.timeouts,
      failures: state.failures,
      queued: :queue.len(state.queue),
      running: state.running != nil,
      timeout_ms: state.timeout,
      device: state.device
    }

    {:reply, status, state}
  end

  @impl true
  def handle_info({:job_done, ref, result}, %{running: {ref, _, _, from, timer}} = state) when from != nil do
    cancel(timer)
    Process.demonitor(ref, [:flush])
    GenServer.reply(from, result)
    failed = match?({:error, {:job_failed, _}}, result)
    state = if failed, do: %{state | failures: state.failures + 1}, else: %{state | exec_count: state.exec_count + 1}
    {:noreply, next(%{state | running: nil})}
  end

  # The job's process ended: killed after its time limit (already answered), or by an
  # exit from outside.
  def handle_info({:DOWN, ref, :process, _pid, reason}, %{running: {ref, _, _, from, timer}} = state) do
    cancel(timer)

    state =
      if from do
        GenServer.reply(from, {:error, {:job_failed, {:exit, reason}}})
        %{state | failures: state.failures + 1}
      else
        state
      end

    {:noreply, next(%{state | running: nil})}
  end

  # A job past its time limit is killed and its caller answered at once; the next job
  # starts only when the killed one is gone (a job inside a NIF ends when the NIF returns).
  def handle_info({:job_timeout, ref}, %{running: {ref, pid, started, from, _}} = state) do
    Process.exit(pid, :kill)
    elapsed = System.monotonic_time(:millisecond) - started
    Logger.warning("Nx.Vulkan.Node: a job ran past #{state.timeout} ms (#{elapsed} ms) and was killed")
    GenServer.reply(from, {:error, :node_timeout})
    {:noreply, %{state | running: {ref, pid, started, nil, nil}, timeouts: state.timeouts + 1}}
  end

  # Messages of jobs already answered (a late result after a timeout), and exits of
  # linked processes: nothing to do.
  def handle_info(_message, state), do: {:noreply, state}

  @impl true
  def terminate(_reason, _state) do
    Nx.Vulkan.PipelineCache.persist()
    :ok
  end

  # Starts the next queued job if none is running.
  defp next(%{running: nil} = state) do
    case :queue.out(state.queue) do
      {:empty, _} ->
        state

      {{:value, {fun, from}}, queue} ->
        node = self()

        # The job waits for its own monitor reference, which tags its result.
        {pid, ref} =
          spawn_monitor(fn ->
            receive do
              {:go, ref} -> send(node, {:job_done, ref, run_job(fun)})
            end
          end)

        send(pid, {:go, ref})
        running = {ref, pid, System.monotonic_time(:millisecond), from, timer(ref, state.timeout)}
        %{state | queue: queue, running: running}
    end
  end

  defp next(state), do: state

  # A job's value, or the error it raised, threw or exited with (caught here, so the
  # job's process ends normally and logs no crash).
  defp run_job(fun) do
    fun.()
  catch
    kind, reason -> {:error, {:job_failed, {kind, reason}}}
  end

  defp timer(_ref, :infinity), do: nil
  defp timer(ref, ms), do: Process.send_after(self(), {:job_timeout, ref}, ms)

  defp cancel(nil), do: :ok
  defp cancel(timer), do: Process.cancel_timer(timer)
end
