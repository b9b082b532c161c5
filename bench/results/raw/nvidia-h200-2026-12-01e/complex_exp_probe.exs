# Probe: where do c128 exp results differ from Nx.BinaryBackend on this device?
Application.ensure_all_started(:nx)
Nx.default_backend(Nx.BinaryBackend)
Nx.Vulkan.set_fallback(:raise)
steps = [-4.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.5]
re = for r <- steps, _i <- steps, do: r
im = for _r <- steps, i <- steps, do: i
h = fn l -> Nx.tensor(l, type: :f64, backend: Nx.BinaryBackend) end
g = fn t -> Nx.backend_transfer(t, Nx.Vulkan.Backend) end
b = fn t -> Nx.backend_transfer(t, Nx.BinaryBackend) end

cmp = fn name, want, got ->
  w = Nx.to_flat_list(want)
  gg = Nx.to_flat_list(b.(got))
  n = Enum.zip(w, gg) |> Enum.count(fn {x, y} -> x === y end)
  IO.puts("#{name}: #{n}/#{length(w)} identical")
end

for {name, f} <- [exp: &Nx.exp/1, cos: &Nx.cos/1, sin: &Nx.sin/1] do
  cmp.("real #{name} of re", f.(h.(re)), f.(g.(h.(re))))
  cmp.("real #{name} of im", f.(h.(im)), f.(g.(h.(im))))
end

# exp(z) parts by hand on the GPU (f64 tensors) vs complex exp on the GPU
z = Nx.complex(h.(re), h.(im))
want = Nx.exp(z)
got = b.(Nx.exp(g.(z)))
hand_re = b.(Nx.multiply(Nx.exp(g.(h.(re))), Nx.cos(g.(h.(im)))))
ww = Nx.to_flat_list(Nx.real(want))
gw = Nx.to_flat_list(Nx.real(got))
hw = Nx.to_flat_list(hand_re)
cnt = fn a, c -> Enum.zip(a, c) |> Enum.count(fn {x, y} -> x === y end) end

IO.puts(
  "c128 exp real part: #{cnt.(ww, gw)}/100; by hand on the GPU: #{cnt.(ww, hw)}/100; complex vs by hand: #{cnt.(gw, hw)}/100"
)

cpu_re = Enum.zip(re, im) |> Enum.map(fn {r, i} -> :math.exp(r) * :math.cos(i) end)
IO.puts("cpu by hand == BinaryBackend real part: #{cpu_re == ww}")

for {{x, y}, k} <- Enum.with_index(Enum.zip(ww, gw)), x !== y do
  IO.puts("  #{Enum.at(re, k)} #{Enum.at(im, k)}: nx #{x} gpu #{y} gpu-by-hand #{Enum.at(hw, k)}")
end
