# Runs the Elixir test suite with plain `elixir`, no Mix and no Hex:
#
#     elixir test/run_offline.exs
#
# Native tests (test/native) need only the NIF. Tests that need Nx/Axon (test/nx) run
# when those libraries are on the code path (ERL_LIBS) and are reported as skipped
# otherwise. Pass --only-native to leave out test/nx entirely, or test files to run only
# those of test/nx.
root = Path.expand("..", __DIR__)

Application.ensure_all_started(:logger)
nx? = Code.ensure_loaded?(Nx)
if nx?, do: Application.ensure_all_started(:nx)
axon? = nx? and Code.ensure_loaded?(Axon)
exmc? = nx? and Code.ensure_loaded?(Exmc.Builder)
Process.put(:nx_vulkan_has_nx, nx?)

native_files = ~w(native_path.ex native.ex native_v.ex node.ex pipeline_cache.ex)

# Everything else in lib/ needs Nx.
nx_files =
  Path.wildcard(Path.join(root, "lib/**/*.ex"))
  |> Enum.map(&Path.relative_to(&1, Path.join(root, "lib")))
  |> Kernel.--(Enum.map(native_files, &"nx_vulkan/#{&1}"))

# The loader macro module first: the others need it at compile time.
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))

files =
  Enum.map(tl(native_files), &Path.join([root, "lib/nx_vulkan", &1])) ++
    if(nx?, do: Enum.map(nx_files, &Path.join([root, "lib", &1])), else: [])

# compile, not require: it waits for the modules whose structs a file uses.
{:ok, _, _} = Kernel.ParallelCompiler.compile(files)

IO.puts(
  "Nx: #{if nx?, do: "available (#{Application.spec(:nx, :vsn)})", else: "not installed: test/nx is skipped"}" <>
    "; Axon: #{if axon?, do: "available", else: "not installed"}" <>
    "; eXMC: #{if exmc?, do: "available", else: "not installed"}"
)

# The differential sweep (test/nx/sweep_test.exs) runs when NX_VULKAN_SWEEP_SECONDS is set,
# the soak (test/nx/soak_test.exs) when NX_VULKAN_SOAK_SECONDS is.
sweep? = System.get_env("NX_VULKAN_SWEEP_SECONDS") not in [nil, ""]
soak? = System.get_env("NX_VULKAN_SOAK_SECONDS") not in [nil, ""]

# NX_VULKAN_TEST_SEED replays a run's order (ExUnit prints its seed); NX_VULKAN_TEST_TRACE=1
# prints each test as it starts and ends.
ExUnit.start(
  [
    max_cases: 1,
    trace: System.get_env("NX_VULKAN_TEST_TRACE") in ["1", "true"],
    exclude:
      if(axon?, do: [], else: [:axon]) ++
        if(exmc?, do: [], else: [:exmc]) ++
        if(sweep?, do: [], else: [:sweep]) ++
        if(soak?, do: [], else: [:soak])
  ] ++ if(seed = System.get_env("NX_VULKAN_TEST_SEED"), do: [seed: String.to_integer(seed)], else: [])
)

Code.require_file(Path.join(root, "test/support/case_helpers.exs"))

only_native? = "--only-native" in System.argv()

for file <- Path.wildcard(Path.join([root, "test", "native", "*_test.exs"])), do: Code.require_file(file)

# Test files named on the command line (`elixir test/run_offline.exs test/nx/x_test.exs`)
# narrow test/nx to those.
named = for arg <- System.argv(), String.ends_with?(arg, "_test.exs"), do: Path.expand(arg)

nx_test_files =
  cond do
    only_native? -> []
    named != [] -> named
    true -> Path.wildcard(Path.join([root, "test", "nx", "*_test.exs"]))
  end

if nx? do
  Code.require_file(Path.join(root, "test/support/nx_helpers.exs"))
  Code.require_file(Path.join(root, "test/support/sweep.exs"))
  for file <- nx_test_files, do: Code.require_file(file)
else
  # Without Nx these files cannot even compile (they use Nx structs). Each of their tests
  # is registered under its own name as skipped, so the report counts them as skipped.
  for file <- nx_test_files do
    names = Regex.scan(~r/^\s*test\s+"([^"]+)"/m, File.read!(file)) |> Enum.map(&List.last/1)
    mod = Module.concat(Nx.Vulkan.NeedsNx, Macro.camelize(Path.basename(file, "_test.exs")))

    Module.create(
      mod,
      quote do
        use ExUnit.Case
        @moduletag skip: "needs Nx (not installed: hex.pm unreachable); file #{unquote(Path.relative_to(file, root))}"
        for name <- unquote(names), do: test(name, do: :ok)
      end,
      Macro.Env.location(__ENV__)
    )
  end
end
