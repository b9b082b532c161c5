# Loads this project's lib/ without Mix (no Hex here): the NIF loader macro module first,
# then the rest compiled in memory; then consolidates the protocols on the code path, as
# Mix does for a project (and Mix.install for a notebook): unconsolidated, each of Nx's
# container walks looks its implementation up anew, tens of microseconds per compiled
# call that a user never pays (about 0.2 s here, once). Needs Nx on the code path
# (ERL_LIBS). Use it before a script written for `mix run`:
#
#     elixir -r scripts/load_lib.exs examples/axon_training_loop.exs
root = Path.expand("..", __DIR__)

unless Code.ensure_loaded?(Nx.Vulkan.Backend) do
  for app <- [:logger, :nx], do: {:ok, _} = Application.ensure_all_started(app)
  loader = Path.join(root, "lib/nx_vulkan/native_path.ex")
  Code.require_file(loader)
  {:ok, _, _} = Kernel.ParallelCompiler.compile(Path.wildcard(Path.join(root, "lib/**/*.ex")) -- [loader])
end

# Protocols: every implementation on the code path (this lib defines none).
paths = Enum.map(:code.get_path(), &List.to_string/1)

for protocol <- Protocol.extract_protocols(paths), not Protocol.consolidated?(protocol) do
  {:ok, binary} = Protocol.consolidate(protocol, Protocol.extract_impls(protocol, paths))
  :code.purge(protocol)
  {:module, _} = :code.load_binary(protocol, ~c"consolidated", binary)
end
