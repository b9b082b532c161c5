# The engine's figures as an Elixir caller sees them (NIF calls, dirty schedulers and
# term conversion included), with plain `elixir` and no Nx:
#
#     elixir bench/elixir_bench.exs
#
# Prints one JSON object per figure.
root = Path.expand("..", __DIR__)
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))
Code.require_file(Path.join(root, "lib/nx_vulkan/native.ex"))
alias Nx.Vulkan.Native

{:ok, name} = Native.dev_init()

median = fn list ->
  sorted = Enum.sort(list)
  Enum.at(sorted, div(length(sorted), 2))
end

emit = fn figure, size, value, unit, what ->
  IO.puts(
    ~s({"figure":"#{figure}","size":"#{size}","value":#{Float.round(value, 4)},"unit":"#{unit}","what":"#{what}","caller":"elixir"})
  )
end

IO.puts(~s({"device":"#{name}","caller":"elixir","otp":"#{System.otp_release()}"}))
a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-little>>
b = for x <- [10.0, 20.0, 30.0, 40.0], into: <<>>, do: <<x::float-32-little>>

# Warm-up: about a second of 1024 matmuls, since an idle GPU clocks down (engine_bench
# and torch_bench.py do the same; on lavapipe one matmul takes longer than the second).
{:ok, big} = Native.t_constant([1024, 1024], "f32", 1.0)
t0 = System.monotonic_time(:millisecond)

Stream.repeatedly(fn ->
  {:ok, p} = Native.t_dot(big, [1], [], big, [0], [], "f32")
  {:ok, _} = Native.t_to_binary(p, 1)
end)
|> Enum.find(fn _ -> System.monotonic_time(:millisecond) - t0 > 1000 end)

roundtrip = fn ->
  {:ok, ta} = Native.t_from_binary(a, [4], "f32")
  {:ok, tb} = Native.t_from_binary(b, [4], "f32")
  {:ok, tc} = Native.t_binary("add", ta, tb, [4], "f32")
  {:ok, _} = Native.t_to_binary(tc, nil)
end

for _ <- 1..300, do: roundtrip.()
times = for _ <- 1..3000, do: elem(:timer.tc(roundtrip), 0)
emit.("tiny_add_roundtrip", "4 x f32", median.(times) * 1.0, "us", "upload a, upload b, add, download")

{:ok, ta} = Native.t_from_binary(a, [4], "f32")
{:ok, tb} = Native.t_from_binary(b, [4], "f32")
iters = 20_000

per_op =
  for _ <- 1..7 do
    {us, _} = :timer.tc(fn -> for _ <- 1..iters, do: {:ok, _} = Native.t_binary("add", ta, tb, [4], "f32") end)
    :ok = elem(Native.dev_synchronize(), 1)
    us / iters
  end

emit.("op_issue", "4 x f32", median.(per_op), "us", "add on resident tensors, no readback (host time per op)")
