Nx.Vulkan.set_fallback(:raise)
steps = [-4.0, -1.5, -1.0, -0.5, -0.0, 0.0, 0.25, 1.0, 2.0, 3.5]
grid = for re <- steps, im <- steps, do: Complex.new(re, im)

ops = [
  :exp,
  :expm1,
  :log,
  :log1p,
  :sigmoid,
  :sin,
  :cos,
  :tan,
  :sinh,
  :cosh,
  :tanh,
  :asin,
  :acos,
  :atan,
  :asinh,
  :acosh,
  :atanh,
  :rsqrt,
  :cbrt
]

for type <- [{:c, 64}, {:c, 128}] do
  {exact, total, worst} =
    Enum.reduce(ops, {0, 0, 0.0}, fn op, acc ->
      {e0, t0, _} = acc

      res =
        Enum.reduce(grid, acc, fn z, {e, t, w} ->
          x = Nx.tensor([z], type: type, backend: Nx.BinaryBackend)

          try do
            want = apply(Nx, op, [x])
            got = apply(Nx, op, [Nx.backend_transfer(x, Nx.Vulkan.Backend)]) |> Nx.backend_transfer(Nx.BinaryBackend)
            [gw] = Nx.to_flat_list(want)
            [gg] = Nx.to_flat_list(got)
            same = Nx.to_binary(want) == Nx.to_binary(got)

            d = fn a, b ->
              if is_number(a) and is_number(b), do: abs(a - b) / max(1.0, max(abs(a), abs(b))), else: 0.0
            end

            dd = if is_struct(gw, Complex), do: max(d.(gw.re, gg.re), d.(gw.im, gg.im)), else: 0.0
            {e + if(same, do: 1, else: 0), t + 1, max(w, dd)}
          rescue
            ArithmeticError -> {e, t, w}
          end
        end)

      {e1, t1, _} = res
      IO.puts("  #{inspect(type)} #{op}: #{e1 - e0}/#{t1 - t0}")
      res
    end)

  IO.puts("#{inspect(type)}: #{exact}/#{total} bit-identical, worst scaled difference #{worst}")
end
