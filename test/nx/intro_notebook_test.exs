defmodule Nx.Vulkan.IntroNotebookTest do
  # notebooks/intro.livemd: its cells are the seed notebook's, byte for byte (the first,
  # Mix.install, cell aside), and each runs here and shows what the text around it says.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  @moduletag :axon

  import ExUnit.CaptureIO

  @root Path.expand("../..", __DIR__)
  @notebook Path.join(@root, "notebooks/intro.livemd")
  # The seed, where the workplace's shared folder sits beside the checkout.
  @seed Path.expand("../shared/seed/intro.livemd", @root)

  defp cells(path) do
    Regex.scan(~r/^```elixir\n(.*?)^```$/ms, File.read!(path)) |> Enum.map(fn [_, code] -> code end)
  end

  test "the cells are the seed's, byte for byte, except the Mix.install cell" do
    if File.exists?(@seed) do
      [ours_install | ours] = cells(@notebook)
      [seed_install | seed] = cells(@seed)
      assert ours_install =~ "Mix.install(" and seed_install =~ "Mix.install("
      assert ours_install =~ ":nx_vulkan" and ours_install =~ ":axon"
      assert length(ours) == length(seed)
      for {a, b} <- Enum.zip(ours, seed), do: assert(a == b)
    else
      IO.puts("\n  (seed notebook not found at #{@seed}: byte comparison skipped)")
    end
  end

  # Evaluates the cells after Mix.install in one binding, as Livebook does; returns each
  # cell's value and printed output.
  defp run_cells do
    [_install | rest] = cells(@notebook)

    {results, _} =
      Enum.map_reduce(rest, {[], Code.env_for_eval(file: @notebook)}, fn code, {binding, env} ->
        {{value, binding, env}, out} =
          with_io(fn -> Code.eval_quoted_with_env(Code.string_to_quoted!(code), binding, env) end)

        {{value, out, binding}, {binding, env}}
      end)

    results
  end

  test "every cell runs and gives the values its text states" do
    [boot, transfer, round_trip, add, sigmoid, reduce, matmul, forward, grad, sgd] = run_cells()

    assert {{:ok, ref}, _, _} = boot
    assert is_reference(ref)

    {_, out, _} = transfer
    assert out =~ "before transfer: Nx.BinaryBackend"
    assert out =~ "after transfer: Nx.Vulkan.VulkanoBackend"

    {_, out, _} = round_trip
    assert out =~ "round-trip: [1.0, 2.0, 3.0, 4.0, 5.0]"

    assert elem(add, 0) == [11.0, 22.0, 33.0, 44.0]
    assert [0.7310585975646973, 0.8807970881462097 | _] = elem(sigmoid, 0)
    assert elem(reduce, 0) == {120.0, [24.0, 28.0, 32.0, 36.0]}
    assert elem(matmul, 0) == [[10.0, 13.0], [28.0, 40.0]]

    # The forward pass and the gradient against the same computation on Nx.BinaryBackend.
    {out_gpu, _, binding} = forward
    host = &Nx.backend_transfer(&1, Nx.BinaryBackend)
    params = binding[:params]
    x = host.(binding[:x_vk])
    out_cpu = binding[:predict_fn].(params, %{"x" => x})
    assert_all_close(Nx.tensor(out_gpu), out_cpu, 1.0e-6)

    {{loss, grad_sum}, _, binding} = grad

    {cpu_loss, cpu_grads} =
      Nx.Defn.jit_apply(binding[:grad_fn], [params, x, host.(binding[:target])], compiler: Nx.Defn.Evaluator)

    assert_in_delta loss, Nx.to_number(cpu_loss), 1.0e-6 * max(1.0, abs(loss))
    cpu_sum = cpu_grads.data["dense_0"]["kernel"] |> Nx.sum() |> Nx.to_number()
    assert_in_delta grad_sum, cpu_sum, 1.0e-5 * max(1.0, abs(cpu_sum))

    # "the sum change by a small amount — exactly -lr * sum(grad)" (to f32 rounding)
    {_, out, _} = sgd
    [_, before, after_step] = Regex.run(~r/dense_0 kernel sum: (\S+) → (\S+)/, out)
    {before, after_step} = {String.to_float(before), String.to_float(after_step)}
    assert before != after_step
    assert_in_delta after_step - before, -0.01 * grad_sum, 1.0e-5
  end

  test "device start-up prints the notebook's line once per VM" do
    script = """
    {:ok, _} = Nx.Vulkan.NativeV.buf_alloc(4)
    {:ok, _} = Nx.Vulkan.NativeV.buf_alloc(4)
    Nx.Vulkan.init()
    Nx.to_list(Nx.add(Nx.tensor([1.0], backend: Nx.Vulkan.VulkanoBackend), 1.0)) |> IO.inspect()
    """

    {out, 0} =
      System.cmd("elixir", ["-r", Path.join(@root, "scripts/load_lib.exs"), "-e", script], stderr_to_stdout: true)

    lines =
      Regex.scan(~r/^\[nx_vulkan_vulkano\] device: .+ \((DiscreteGpu|IntegratedGpu|VirtualGpu|Cpu|Other)\)$/m, out)

    assert length(lines) == 1, out
    assert out =~ "[2.0]"
  end

  defp assert_all_close(a, b, tol) do
    diff = Nx.subtract(a, b) |> Nx.abs() |> Nx.reduce_max() |> Nx.to_number()
    assert diff <= tol, "max |difference| #{diff} > #{tol}"
  end
end
