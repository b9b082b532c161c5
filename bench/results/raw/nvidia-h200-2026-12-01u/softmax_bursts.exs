root = File.cwd!()
Code.require_file(Path.join(root, "lib/nx_vulkan/native_path.ex"))

{:ok, _, _} =
  Path.wildcard(Path.join(root, "lib/**/*.ex"))
  |> Kernel.--([Path.join(root, "lib/nx_vulkan/native_path.ex")])
  |> Kernel.ParallelCompiler.compile()

{:ok, _} = Application.ensure_all_started(:nx)
Nx.default_backend(Nx.Vulkan.Backend)

softmax = fn t ->
  e = Nx.exp(Nx.subtract(t, Nx.reduce_max(t, axes: [1], keep_axes: true)))
  Nx.divide(e, Nx.sum(e, axes: [1], keep_axes: true))
end

{m, _} = Nx.Random.uniform(Nx.Random.key(1), shape: {4096, 4096}, type: :f32)
fused = Nx.Defn.jit(softmax, compiler: Nx.Vulkan.Compiler)
for _ <- 1..20, do: fused.(m)
Nx.Vulkan.synchronize()
pick = fn s -> Map.take(s, [:buffers_created, :buffers_reused, :live_bytes, :pooled_bytes, :submits, :waits]) end

burst = fn label, f ->
  for b <- 1..5 do
    s0 = Nx.Vulkan.stats()
    t0 = System.monotonic_time(:microsecond)
    f.()
    Nx.Vulkan.synchronize()
    dt = (System.monotonic_time(:microsecond) - t0) / 10
    s1 = Nx.Vulkan.stats()
    d = Map.new(pick.(s1), fn {k, v} -> {k, v - Map.get(s0, k)} end)
    IO.puts("#{label} #{b}: #{dt} us/call #{inspect(d)}")
  end
end

burst.("for (results kept)", fn -> for _ <- 1..10, do: fused.(m) end)
burst.("each (results dropped)", fn -> Enum.each(1..10, fn _ -> fused.(m) end) end)

burst.("each + gc", fn ->
  Enum.each(1..10, fn _ ->
    fused.(m)
    :erlang.garbage_collect()
  end)
end)

burst.("for (results kept) again", fn -> for _ <- 1..10, do: fused.(m) end)

burst.("for, every result kept (fresh buffers)", fn ->
  r = for _ <- 1..10, do: fused.(m)
  Process.put(:keep, [r | Process.get(:keep, [])])
end)
