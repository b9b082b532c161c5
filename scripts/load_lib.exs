# Loads this project's lib/ without Mix (no Hex here): the NIF loader macro module first,
# then the rest compiled in memory. Needs Nx on the code path (ERL_LIBS). Use it before a
# script written for `mix run`:
#
#     elixir -r scripts/load_lib.exs examples/axon_training_loop.exs
root = Path.expand("..", __DIR__)

unless Code.ensure_loaded?(Nx.Vulkan.Backend) do
  for app <- [:logger, :nx], do: {:ok, _} = Application.ensure_all_started(app)
  loader = Path.join(root, "lib/nx_vulkan/native_path.ex")
  Code.require_file(loader)
  {:ok, _, _} = Kernel.ParallelCompiler.compile(Path.wildcard(Path.join(root, "lib/**/*.ex")) -- [loader])
end
