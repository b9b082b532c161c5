defmodule Nx.Vulkan.ExmcContractTest do
  # The seed package's functions that eXMC calls, in their published contract:
  # NativeV's leapfrog chains in a caller's SPIR-V, Native.device_name/has_f64,
  # Nx.Vulkan.Node and Nx.Vulkan.PipelineCache. No Nx needed.
  use ExUnit.Case, async: false

  alias Nx.Vulkan.{Native, NativeV, Node, PipelineCache}

  @shader Path.expand("../../native/nx_vulkan/tests/shaders/chain_normal_f64.comp", __DIR__)

  defp f64(list), do: for(x <- list, into: <<>>, do: <<x::float-64-little>>)
  defp to_f64(bin), do: for(<<x::float-64-little <- bin>>, do: x)
  defp push(k, n_obs, d, eps), do: <<k::little-32, n_obs::little-32, d::little-32, 0::little-32, eps::float-64-little>>

  # The test kernel compiled as eXMC compiles its own: glslangValidator to a .spv file.
  defp spv! do
    case System.find_executable("glslangValidator") do
      nil ->
        flunk("glslangValidator (Debian: glslang-tools) is needed to compile the test kernel, as eXMC does")

      exe ->
        out = Path.join(System.tmp_dir!(), "nx_vulkan_chain_#{System.unique_integer([:positive])}.spv")
        {_, 0} = System.cmd(exe, ["-V", @shader, "-o", out], stderr_to_stdout: true)
        out
    end
  end

  test "leapfrog_chain_synth_f64: one step of a 1-D chain, checked by hand" do
    spv = spv!()
    # d = 1, no observations: logp = -2 (q - 0.25)^2, grad = -4 (q - 0.25), inverse mass 2.
    {q, p, eps} = {1.0, 0.5, 0.1}
    grad = fn q -> -4.0 * (q - 0.25) end
    half = p + 0.5 * eps * grad.(q)
    q1 = q + eps * 2.0 * half
    p1 = half + 0.5 * eps * grad.(q1)

    assert {:ok, {qc, pc, gc, lc}} =
             NativeV.leapfrog_chain_synth_f64(f64([q]), f64([p]), f64([2.0]), push(1, 0, 1, eps), 1, spv)

    assert [got_q] = to_f64(qc)
    assert [got_p] = to_f64(pc)
    assert_in_delta got_q, q1, 1.0e-15
    assert_in_delta got_p, p1, 1.0e-15
    assert_in_delta hd(to_f64(gc)), grad.(q1), 1.0e-15
    assert_in_delta hd(to_f64(lc)), -2.0 * (q1 - 0.25) * (q1 - 0.25), 1.0e-15
  end

  test "leapfrog_chain_synth_f64: k rows of d, and the batch is its chains side by side" do
    spv = spv!()
    {d, k, n_obs} = {3, 40, 2}
    q = f64([0.1, -0.2, 0.3])
    p = f64([1.0, 0.0, -1.0])
    extras = f64([0.5, 0.7, 1.0, 1.0, 1.0])
    assert {:ok, {qc, pc, gc, lc}} = NativeV.leapfrog_chain_synth_f64(q, p, extras, push(k, n_obs, d, -0.05), k, spv)
    assert byte_size(qc) == k * d * 8 and byte_size(pc) == k * d * 8 and byte_size(gc) == k * d * 8
    assert byte_size(lc) == k * 8

    q2 = f64([0.0, 0.0, 0.0])
    batch_push = <<k::little-32, n_obs::little-32, d::little-32, 2::little-32, -0.05::float-64-little>>

    assert {:ok, {bq, bp, bg, bl}} =
             NativeV.leapfrog_chain_synth_batch_f64(q <> q2, p <> p, extras <> extras, batch_push, k, spv)

    assert binary_part(bq, 0, k * d * 8) == qc and binary_part(bp, 0, k * d * 8) == pc
    assert binary_part(bg, 0, k * d * 8) == gc and binary_part(bl, 0, k * 8) == lc
    assert {:ok, {q2c, _, _, _}} = NativeV.leapfrog_chain_synth_f64(q2, p, extras, push(k, n_obs, d, -0.05), k, spv)
    assert binary_part(bq, k * d * 8, k * d * 8) == q2c
  end

  test "leapfrog_chain_synth_f64: the contract's error tuples" do
    spv = spv!()
    one = f64([1.0])

    assert NativeV.leapfrog_chain_synth_f64(one, f64([1.0, 2.0]), one, push(1, 0, 1, 0.1), 1, spv) ==
             {:error, :size_mismatch}

    assert NativeV.leapfrog_chain_synth_f64(one, one, one, push(0, 0, 1, 0.1), 0, spv) == {:error, :bad_input}
    assert NativeV.leapfrog_chain_synth_f64(one, one, one, <<1, 2, 3>>, 1, spv) == {:error, :bad_input}
    assert NativeV.leapfrog_chain_synth_f64(one, one, one, push(1, 0, 1, 0.1), -1, spv) == {:error, :bad_input}
    assert NativeV.leapfrog_chain_synth_f64(one, one, one, push(1, 0, 1, 0.1), 1.5, spv) == {:error, :bad_input}

    assert {:error, :dispatch_failed, msg} =
             NativeV.leapfrog_chain_synth_f64(one, one, one, push(1, 0, 1, 0.1), 1, "/nonexistent/x.spv")

    assert msg =~ "read spv"
    File.write!(bad = spv <> ".txt", "#version 450 is not SPIR-V")
    assert {:error, :dispatch_failed, msg} = NativeV.leapfrog_chain_synth_f64(one, one, one, push(1, 0, 1, 0.1), 1, bad)
    assert msg =~ "SPIR-V"
  end

  test "Native.device_name/0 and has_f64/0" do
    assert is_binary(Native.device_name()) and Native.device_name() != ""
    assert is_boolean(Native.has_f64())
  end

  test "Node runs jobs in order, survives a raising job, and times out a stuck one" do
    name = :"node_#{System.unique_integer([:positive])}"
    refute Node.alive?(name)
    assert Node.with_node(fn -> :never end, name) == {:error, :node_dead}
    {:ok, pid} = Node.start_link(name: name, timeout_ms: 300, load_pipeline_cache: false)
    assert Node.alive?(name)
    assert Node.with_node(fn -> Native.device_name() end, name) == Native.device_name()

    assert {:error, {:job_failed, {:error, %RuntimeError{message: "boom"}}}} =
             Node.with_node(fn -> raise "boom" end, name)

    assert {:error, {:job_failed, {:exit, :bye}}} = Node.with_node(fn -> exit(:bye) end, name)
    t0 = System.monotonic_time(:millisecond)
    assert Node.with_node(fn -> Process.sleep(:infinity) end, name) == {:error, :node_timeout}
    assert System.monotonic_time(:millisecond) - t0 < 2_000
    # Concurrent callers are served one job at a time, each answered.
    results =
      1..5 |> Enum.map(fn i -> Task.async(fn -> Node.with_node(fn -> i * i end, name) end) end) |> Task.await_many()

    assert results == [1, 4, 9, 16, 25]
    status = Node.status(name)
    assert %{exec_count: 6, timeouts: 1, failures: 2, queued: 0, running: false} = status
    assert is_integer(status.uptime_ms) and status.device == Native.device_name()
    GenServer.stop(pid)
    refute Node.alive?(name)
  end

  test "PipelineCache persists, loads back, and ignores damaged or foreign files with a warning" do
    dir = Path.join(System.tmp_dir!(), "nx_vulkan_pc_#{System.unique_integer([:positive])}")
    Application.put_env(:nx_vulkan, :pipeline_cache_dir, dir)
    on_exit(fn -> Application.delete_env(:nx_vulkan, :pipeline_cache_dir) end)
    path = PipelineCache.default_path()
    assert String.starts_with?(path, dir)
    assert Path.basename(path) =~ ~r/^pipelines-[0-9a-f]{32}-\d+\.bin$/ or Path.basename(path) =~ "unknown"
    assert PipelineCache.load() == {:error, :enoent}
    assert PipelineCache.persist() == :ok
    assert PipelineCache.load() == :ok

    bytes = File.read!(path)
    File.write!(path, binary_part(bytes, 0, byte_size(bytes) - 3))
    log = ExUnit.CaptureLog.capture_log(fn -> assert {:error, _} = PipelineCache.load() end)
    assert log =~ "corrupt"
    File.write!(path, "some other program's file")
    log = ExUnit.CaptureLog.capture_log(fn -> assert {:error, _} = PipelineCache.load() end)
    assert log =~ "not an Nx.Vulkan pipeline cache"
    assert PipelineCache.clear() == :ok
    refute File.exists?(path)
  end
end
