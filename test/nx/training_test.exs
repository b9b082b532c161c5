defmodule Nx.Vulkan.TrainingTest do
  # The intro's Axon model and one SGD step, on the GPU and on Nx.BinaryBackend.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  @moduletag :axon

  import Nx.Vulkan.NxHelpers, only: [host: 1]

  defp model do
    Axon.input("x", shape: {nil, 4})
    |> Axon.dense(16, activation: :sigmoid)
    |> Axon.dense(2)
  end

  defp params_on(params, backend) do
    Nx.Defn.Composite.traverse(params, &Nx.backend_copy(&1, backend))
  end

  # The GPU step compiled by the Evaluator (op by op) and by Nx.Vulkan.Compiler (fused).
  test "forward pass, value_and_grad and an SGD step match Nx.BinaryBackend" do
    {init_fn, predict_fn} = Axon.build(model(), compiler: Nx.Defn.Evaluator)
    x = Nx.iota({8, 4}, type: :f32) |> Nx.divide(32.0)
    y = Nx.iota({8, 2}, type: :f32) |> Nx.remainder(2.0)
    cpu_params = init_fn.(Nx.template({8, 4}, :f32), Axon.ModelState.empty()).data

    loss = fn params, x, y, predict ->
      predict.(params, x) |> Nx.subtract(y) |> Nx.pow(2) |> Nx.mean()
    end

    step = fn params, x, y, compiler ->
      # Nx.Defn.Evaluator runs every op of the traced step eagerly on the tensors' backend.
      grad_fn =
        Nx.Defn.jit(
          fn params, x, y -> Nx.Defn.value_and_grad(params, fn p -> loss.(p, x, y, predict_fn) end) end,
          compiler: compiler
        )

      {l, g} = grad_fn.(params, x, y)

      new = sgd(params, g)
      {l, new}
    end

    previous = Nx.Vulkan.set_fallback(:raise)

    try do
      gpu_params = params_on(cpu_params, Nx.Vulkan.Backend)
      gx = Nx.backend_copy(x, Nx.Vulkan.Backend)
      gy = Nx.backend_copy(y, Nx.Vulkan.Backend)

      gpu_out = predict_fn.(gpu_params, gx)
      cpu_out = predict_fn.(cpu_params, x)
      assert %Nx.Vulkan.VulkanoBackend{} = gpu_out.data
      assert Nx.all_close(host(gpu_out), cpu_out, atol: 1.0e-5) |> Nx.to_number() == 1

      {cl, cnew} = step.(cpu_params, x, y, Nx.Defn.Evaluator)

      for compiler <- [Nx.Defn.Evaluator, Nx.Vulkan.Compiler] do
        {gl, gnew} = step.(gpu_params, gx, gy, compiler)
        assert_in_delta Nx.to_number(gl), Nx.to_number(cl), 1.0e-5

        for {g, c} <- Enum.zip(flat(gnew), flat(cnew)) do
          assert %Nx.Vulkan.VulkanoBackend{} = g.data
          assert Nx.all_close(host(g), c, atol: 1.0e-5) |> Nx.to_number() == 1, inspect(compiler)
        end
      end
    after
      Nx.Vulkan.set_fallback(previous)
    end
  end

  defp sgd(%Nx.Tensor{} = p, %Nx.Tensor{} = g), do: Nx.subtract(p, Nx.multiply(g, 0.1))
  defp sgd(%{} = p, %{} = g), do: Map.new(p, fn {k, v} -> {k, sgd(v, Map.fetch!(g, k))} end)

  defp flat(params) do
    {_, acc} = Nx.Defn.Composite.traverse(params, [], fn t, acc -> {t, [t | acc]} end)
    Enum.reverse(acc)
  end
end
