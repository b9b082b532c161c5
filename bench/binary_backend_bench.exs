# The peer on machines without a GPU: the same figures on Nx.BinaryBackend (needs Nx on
# the code path). Prints JSON lines like the other runners.
#
#     ERL_LIBS=... elixir bench/binary_backend_bench.exs
Application.ensure_all_started(:nx)

median = fn list -> list |> Enum.sort() |> Enum.at(div(length(list), 2)) end

emit = fn figure, size, value, unit ->
  IO.puts(~s({"figure":"#{figure}","size":"#{size}","value":#{Float.round(value * 1.0, 4)},"unit":"#{unit}"}))
end

IO.puts(~s<{"peer":"Nx.BinaryBackend (Nx #{Application.spec(:nx, :vsn)}, OTP #{System.otp_release()})"}>)
a = [1.0, 2.0, 3.0, 4.0]
b = [10.0, 20.0, 30.0, 40.0]
roundtrip = fn -> Nx.add(Nx.tensor(a), Nx.tensor(b)) |> Nx.to_binary() end
for _ <- 1..300, do: roundtrip.()
emit.("tiny_add_roundtrip", "4 x f32", median.(for _ <- 1..3000, do: elem(:timer.tc(roundtrip), 0)), "us")

ta = Nx.tensor(a)
tb = Nx.tensor(b)
iters = 20_000
{us, _} = :timer.tc(fn -> for _ <- 1..iters, do: Nx.add(ta, tb) end)
emit.("op_issue", "4 x f32", us / iters, "us")

import Bitwise
n = 1 <<< 24
x = Nx.iota({n}, type: :f32)
y = Nx.iota({n}, type: :f32)
{us, _} = :timer.tc(fn -> Nx.add(x, y) end)
emit.("add_f32", "#{n}", 3 * n * 4 / (us / 1.0e6) / 1.0e9, "GB/s")
{us, _} = :timer.tc(fn -> Nx.sum(x) end)
emit.("sum_f32", "#{n}", n * 4 / (us / 1.0e6) / 1.0e9, "GB/s")

for m <- [256] do
  p = Nx.iota({m, m}, type: :f32)
  {us, _} = :timer.tc(fn -> Nx.dot(p, p) end)
  emit.("matmul_f32", "#{m}", 2 * m * m * m / (us / 1.0e6) / 1.0e12, "TFLOP/s")
end
