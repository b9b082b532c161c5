# Runs Livebook notebooks top to bottom with plain `elixir`, as Livebook would run their
# Elixir cells (one binding and environment through the notebook), with this checkout's
# lib/ and the libraries on ERL_LIBS in place of the notebook's `Mix.install` cell:
#
#     elixir scripts/run_notebooks.exs notebooks/intro.livemd ...
#
# Prints each cell's wall time; a cell that raises prints the cell and the error and the
# run exits with status 1. A summary table (notebook, cells, wall time) ends the run, and
# with NX_VULKAN_NOTEBOOK_TIMES=<file> is also written there as JSON lines.
Code.require_file("load_lib.exs", __DIR__)

defmodule Nx.Vulkan.NotebookRunner do
  @moduledoc false

  @doc "The Elixir cells of a .livemd file, in order."
  def cells(path) do
    Regex.scan(~r/^```elixir\n(.*?)^```$/ms, File.read!(path))
    |> Enum.map(fn [_, code] -> code end)
  end

  @doc "Runs the cells of `path` (all but `Mix.install` ones); returns {cells, ms} or raises."
  def run(path) do
    IO.puts("== #{path}")
    t0 = System.monotonic_time(:millisecond)
    env = Code.env_for_eval(file: Path.expand(path))

    {n, _} =
      path
      |> cells()
      |> Enum.with_index(1)
      |> Enum.reject(fn {code, _} -> code =~ "Mix.install(" end)
      |> Enum.reduce({0, {[], env}}, fn {code, i}, {n, {binding, env}} ->
        c0 = System.monotonic_time(:millisecond)

        state =
          try do
            {_value, binding, env} = Code.eval_quoted_with_env(Code.string_to_quoted!(code, file: path), binding, env)
            {binding, env}
          rescue
            e ->
              IO.puts(:stderr, "cell #{i} of #{path} failed:\n#{code}\n" <> Exception.format(:error, e, __STACKTRACE__))
              System.halt(1)
          end

        IO.puts("   cell #{i}: ok (#{System.monotonic_time(:millisecond) - c0} ms)")
        {n + 1, state}
      end)

    {n, System.monotonic_time(:millisecond) - t0}
  end
end

paths = System.argv()
if paths == [], do: raise(ArgumentError, "usage: elixir scripts/run_notebooks.exs NOTEBOOK.livemd ...")

results = for path <- paths, do: {path, Nx.Vulkan.NotebookRunner.run(path)}

IO.puts("\nnotebook | cells | wall time (device: #{Nx.Vulkan.device_name()})")

for {path, {cells, ms}} <- results, do: IO.puts("#{path} | #{cells} | #{ms} ms")

if file = System.get_env("NX_VULKAN_NOTEBOOK_TIMES") do
  lines =
    for {path, {cells, ms}} <- results,
        do: ~s|{"notebook":"#{path}","cells":#{cells},"ms":#{ms},"device":"#{Nx.Vulkan.device_name()}"}\n|

  File.write!(file, lines, [:append])
end
