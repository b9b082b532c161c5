# 100 training steps of an Axon MLP on Nx.Vulkan and on Nx.BinaryBackend, from the same
# initial parameters and data: the two loss curves compared step by step, a PASS or FAIL
# verdict with the tolerance stated, and a loss plot.
#
#     elixir -r scripts/load_lib.exs examples/axon_training_loop.exs      # without Mix
#     mix run examples/axon_training_loop.exs                             # in a Mix project
#
# Options (environment): STEPS (default 100), COMPILER=evaluator|vulkan (default: vulkan,
# i.e. Nx.Vulkan.Compiler), PLOT=<file.json> writes the Vega-Lite loss plot there.
# Exits with status 1 on FAIL.
defmodule AxonTrainingLoop do
  @moduledoc false

  # Relative difference allowed between the two losses at any step: both are f32; the GPU
  # sums in another order (and fuses), so the last bits of a loss may differ and grow a
  # little over the steps.
  @rtol 1.0e-4

  def rtol, do: @rtol

  def model do
    Axon.input("x", shape: {nil, 8})
    |> Axon.dense(32, activation: :tanh)
    |> Axon.dense(16, activation: :sigmoid)
    |> Axon.dense(1)
  end

  # A fixed regression problem: y = sin(x . w) for 256 points in [-1, 1]^8.
  def data do
    Nx.with_default_backend(Nx.BinaryBackend, fn ->
      {x, key} = Nx.Random.uniform(Nx.Random.key(7), -1.0, 1.0, shape: {256, 8}, type: :f32)
      {w, _} = Nx.Random.normal(key, shape: {8, 1}, type: :f32)
      {x, Nx.sin(Nx.dot(x, w))}
    end)
  end

  def init_params do
    {init_fn, _} = Axon.build(model())
    Nx.with_default_backend(Nx.BinaryBackend, fn -> init_fn.(Nx.template({1, 8}, :f32), Axon.ModelState.empty()) end)
  end

  @doc "Losses of `steps` SGD steps on `backend`, with `compiler` for the step."
  def train(backend, compiler, steps, params, {x, y}) do
    {_, predict_fn} = Axon.build(model())
    on = fn t -> Nx.backend_copy(t, backend) end
    params = Nx.Defn.Composite.traverse(params, on)
    {x, y} = {on.(x), on.(y)}

    step =
      Nx.Defn.jit(
        fn params, x, y ->
          {loss, grads} =
            Nx.Defn.value_and_grad(params, fn p -> predict_fn.(p, x) |> Nx.subtract(y) |> Nx.pow(2) |> Nx.mean() end)

          {loss, sgd(params, grads)}
        end,
        compiler: compiler
      )

    {losses, _} =
      Enum.map_reduce(1..steps, params, fn _, params ->
        {loss, params} = step.(params, x, y)
        {Nx.to_number(loss), params}
      end)

    losses
  end

  defp sgd(%Axon.ModelState{data: p} = state, %Axon.ModelState{data: g}), do: %{state | data: sgd(p, g)}
  defp sgd(%Nx.Tensor{} = p, %Nx.Tensor{} = g), do: Nx.subtract(p, Nx.multiply(g, 0.1))
  defp sgd(%{} = p, %{} = g), do: Map.new(p, fn {k, v} -> {k, sgd(v, Map.fetch!(g, k))} end)

  @doc "The largest relative difference between two loss curves, and the step it is at."
  def compare(gpu, cpu) do
    Enum.zip([gpu, cpu, 1..length(cpu)])
    |> Enum.map(fn {g, c, i} -> {abs(g - c) / max(abs(c), 1.0e-12), i} end)
    |> Enum.max()
  end

  @doc "A Vega-Lite spec of both curves (a map; VegaLite.from_json/1 or Kino take it)."
  def plot_spec(gpu, cpu) do
    values =
      for {curve, name} <- [{gpu, "Nx.Vulkan"}, {cpu, "Nx.BinaryBackend"}],
          {loss, i} <- Enum.with_index(curve, 1),
          do: %{"step" => i, "loss" => loss, "backend" => name}

    %{
      "$schema" => "https://vega.github.io/schema/vega-lite/v5.json",
      "title" => "MSE loss per step",
      "width" => 500,
      "height" => 260,
      "data" => %{"values" => values},
      "mark" => "line",
      "encoding" => %{
        "x" => %{"field" => "step", "type" => "quantitative"},
        "y" => %{"field" => "loss", "type" => "quantitative", "scale" => %{"type" => "log"}},
        "color" => %{"field" => "backend", "type" => "nominal"},
        "strokeDash" => %{"field" => "backend", "type" => "nominal"}
      }
    }
  end
end

steps = String.to_integer(System.get_env("STEPS", "100"))
compiler = if System.get_env("COMPILER") == "evaluator", do: Nx.Defn.Evaluator, else: Nx.Vulkan.Compiler
IO.puts("device: #{Nx.Vulkan.device_name()}; #{steps} steps; GPU step through #{inspect(compiler)}")

params = AxonTrainingLoop.init_params()
data = AxonTrainingLoop.data()

{gpu_us, gpu} = :timer.tc(fn -> AxonTrainingLoop.train(Nx.Vulkan.Backend, compiler, steps, params, data) end)
{cpu_us, cpu} = :timer.tc(fn -> AxonTrainingLoop.train(Nx.BinaryBackend, Nx.Defn.Evaluator, steps, params, data) end)

IO.puts("step | Nx.Vulkan | Nx.BinaryBackend")

for {g, c, i} <- Enum.zip([gpu, cpu, 1..steps]), i in [1, 2, 5, 10, 25, 50, 75, 100] or i == steps do
  IO.puts("#{i} | #{inspect(g)} | #{inspect(c)}")
end

{worst, at} = AxonTrainingLoop.compare(gpu, cpu)
IO.puts("wall time: Nx.Vulkan #{div(gpu_us, 1000)} ms, Nx.BinaryBackend #{div(cpu_us, 1000)} ms")
IO.puts("loss #{inspect(hd(cpu))} -> #{inspect(List.last(cpu))} (BinaryBackend)")

if plot = System.get_env("PLOT") do
  File.write!(plot, Jason.encode!(AxonTrainingLoop.plot_spec(gpu, cpu)))
  IO.puts("plot: #{plot}")
end

descending? = List.last(cpu) < hd(cpu) / 2

if worst <= AxonTrainingLoop.rtol() and descending? do
  IO.puts(
    "PASS: every step within rtol #{AxonTrainingLoop.rtol()} (largest #{:io_lib.format("~.2e", [worst])} at step #{at})"
  )
else
  IO.puts(
    "FAIL: largest relative difference #{:io_lib.format("~.2e", [worst])} at step #{at} (rtol #{AxonTrainingLoop.rtol()}); loss halved: #{descending?}"
  )

  System.halt(1)
end
