# The 10-minute intro's values, from the command line:
#
#     scripts/demo            # sets up, builds, then runs this file
#     elixir examples/intro.exs
#
# With Nx on the code path (ERL_LIBS, or `mix run examples/intro.exs` in a project that
# has it) the demo goes through Nx.Vulkan.Backend; without Nx it makes the same calls
# through the NIF directly.
root = Path.expand("..", __DIR__)
nx? = Code.ensure_loaded?(Nx)
if nx?, do: Application.ensure_all_started(:nx)

unless Code.ensure_loaded?(Nx.Vulkan.Native) do
  Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))

  files =
    ~w(native.ex native_v.ex)
    |> Enum.map(&Path.join([root, "lib/nx_vulkan", &1]))
    |> Kernel.++(
      if nx?,
        do:
          Enum.map(
            ~w(nx_vulkan.ex nx_vulkan/backend.ex nx_vulkan/backend/fallback.ex nx_vulkan/vulkano_backend.ex),
            &Path.join([root, "lib", &1])
          ),
        else: []
    )

  {:ok, _, _} = Kernel.ParallelCompiler.require(files)
end

if nx? do
  IO.puts("device: #{Nx.Vulkan.init()}")
  Nx.default_backend(Nx.Vulkan.Backend)
  a = Nx.tensor([1.0, 2.0, 3.0, 4.0])
  b = Nx.tensor([10.0, 20.0, 30.0, 40.0])
  # A transfer frees the source: keep the tensor that comes back.
  a = a |> Nx.backend_transfer(Nx.BinaryBackend) |> Nx.backend_transfer(Nx.Vulkan.Backend)
  IO.puts("round trip:   #{inspect(Nx.to_flat_list(a))}")
  IO.puts("add:          #{inspect(Nx.to_flat_list(Nx.add(a, b)))}")
  IO.puts("sigmoid:      #{inspect(Nx.to_flat_list(Nx.sigmoid(a)))}")
  m = Nx.iota({4, 4}, type: :f32)
  IO.puts("sum:          #{Nx.to_number(Nx.sum(m))}")
  IO.puts("column sums:  #{inspect(Nx.to_flat_list(Nx.sum(m, axes: [0])))}")
  IO.puts("dot:          #{inspect(Nx.to_list(Nx.dot(Nx.iota({2, 3}, type: :f32), Nx.iota({3, 2}, type: :f32))))}")
  IO.puts("host fallbacks: #{inspect(Nx.Vulkan.fallback_stats())}")
else
  alias Nx.Vulkan.Native
  f32 = fn list -> for x <- list, into: <<>>, do: <<x::float-32-little>> end

  list = fn {:ok, ref} ->
    {:ok, bin} = Native.t_to_binary(ref, nil)
    for <<x::float-32-little <- bin>>, do: x
  end

  {:ok, name} = Native.dev_init()
  IO.puts("device: #{name}   (Nx is not installed here: calling the NIF directly)")
  {:ok, a} = Native.t_from_binary(f32.([1.0, 2.0, 3.0, 4.0]), [4], "f32")
  {:ok, b} = Native.t_from_binary(f32.([10.0, 20.0, 30.0, 40.0]), [4], "f32")
  IO.puts("round trip:   #{inspect(list.({:ok, a}))}")
  IO.puts("add:          #{inspect(list.(Native.t_binary("add", a, b, [4], "f32")))}")
  IO.puts("sigmoid:      #{inspect(list.(Native.t_unary("sigmoid", a, "f32")))}")
  {:ok, m} = Native.t_iota([4, 4], "f32", nil)
  IO.puts("sum:          #{inspect(list.(Native.t_reduce("sum", m, nil, false, "f32")))}")
  IO.puts("column sums:  #{inspect(list.(Native.t_reduce("sum", m, [0], false, "f32")))}")
  {:ok, x} = Native.t_iota([2, 3], "f32", nil)
  {:ok, y} = Native.t_iota([3, 2], "f32", nil)
  IO.puts("dot:          #{inspect(list.(Native.t_dot(x, [1], [], y, [0], [], "f32")))}")
  {:ok, ref} = Nx.Vulkan.NativeV.buf_alloc(1024)
  IO.puts("buf_alloc:    {:ok, #{inspect(ref)}}")
end
