root = File.cwd!()
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))
Code.require_file(Path.join(root, "lib/nx_vulkan/native.ex"))
alias Nx.Vulkan.Native
{:ok, _} = Native.dev_init()
a = for x <- [1.0, 2.0, 3.0, 4.0], into: <<>>, do: <<x::float-32-little>>
med = fn l -> Enum.at(Enum.sort(l), div(length(l), 2)) end

rt = fn from, bin, to ->
  fn ->
    {:ok, ta} = from.(a, [4], "f32")
    {:ok, tb} = from.(a, [4], "f32")
    {:ok, tc} = bin.("add", ta, tb, [4], "f32")
    {:ok, _} = to.(tc, nil)
  end
end

fast = rt.(&Native.t_from_binary/3, &Native.t_binary/5, &Native.t_to_binary/2)
dirty = rt.(&Native.t_from_binary_dirty/3, &Native.t_binary_dirty/5, &Native.t_to_binary_dirty/2)

for _ <- 1..300,
    do:
      (
        fast.()
        dirty.()
      )

for _ <- 1..3 do
  f = med.(for _ <- 1..2000, do: elem(:timer.tc(fast), 0))
  d = med.(for _ <- 1..2000, do: elem(:timer.tc(dirty), 0))
  IO.puts("roundtrip: twins #{f} us, dirty #{d} us")
end

{:ok, ta} = Native.t_from_binary(a, [4], "f32")

for {name, f} <- [twins: &Native.t_binary/5, dirty: &Native.t_binary_dirty/5] do
  {us, _} = :timer.tc(fn -> for _ <- 1..20000, do: {:ok, _} = f.("add", ta, ta, [4], "f32") end)
  Native.dev_synchronize()
  IO.puts("op issue #{name}: #{us / 20000} us")
end
