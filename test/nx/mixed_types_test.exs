defmodule Nx.Vulkan.MixedTypesTest do
  # Issue 33's wrong-result classes, each checked bit for bit against Nx.BinaryBackend run
  # in the same test, eagerly and through Nx.Vulkan.Compiler: u64 values at or above 2^63
  # against signed operands; integers with floats (rounded once, from their values); float
  # functions of integers past f32's precision; and of s64/u64, on the device.
  use ExUnit.Case, async: false
  import Nx.Vulkan.NxHelpers

  setup do
    raise_on_fallback()
  end

  defp assert_same_bits(label, fun) do
    host = Nx.with_default_backend(Nx.BinaryBackend, fun)

    for mode <- [:eager, :compiler] do
      gpu =
        Nx.with_default_backend(Nx.Vulkan.Backend, fn ->
          case mode do
            :eager -> fun.()
            :compiler -> Nx.Defn.jit_apply(fn _ -> fun.() end, [0], compiler: Nx.Vulkan.Compiler)
          end
        end)

      assert gpu.data.__struct__ == Nx.Vulkan.VulkanoBackend

      assert {gpu.type, Nx.to_binary(gpu)} == {host.type, Nx.to_binary(host)},
             "#{label} (#{mode}): host #{inspect(Nx.to_list(host))}, device #{inspect(Nx.to_list(Nx.backend_copy(gpu, Nx.BinaryBackend)))}"
    end
  end

  @big_u64 [
    0,
    5,
    2_147_483_648,
    4_294_967_295,
    9_223_372_036_854_775_808,
    9_223_372_036_854_775_813,
    18_446_744_073_709_551_615,
    18_446_744_073_709_551_613
  ]

  test "u64 at or above 2^63 against signed operands: ordered and divided by value" do
    u = fn -> Nx.tensor(@big_u64, type: :u64) end

    for other <- [:s8, :s32, :s64],
        op <- [:greater, :less, :greater_equal, :less_equal, :equal, :not_equal, :min, :max] do
      s = fn -> Nx.tensor([7, -1, -3, 2, 0, -128, 127, 3], type: other) end
      assert_same_bits("#{op}(u64, #{other})", fn -> apply(Nx, op, [u.(), s.()]) end)
      assert_same_bits("#{op}(#{other}, u64)", fn -> apply(Nx, op, [s.(), u.()]) end)
    end

    for op <- [:greater, :less, :max, :min, :equal] do
      # A number operand is a signed constant: Nx.max(u64, 5) stays u64.
      assert_same_bits("#{op}(u64, 5)", fn -> apply(Nx, op, [u.(), 5]) end)
      assert_same_bits("#{op}(u64, -1)", fn -> apply(Nx, op, [u.(), -1]) end)
    end

    d = fn -> Nx.tensor([5, -1, 7, 3, -3, 9, 2, -7], type: :s64) end
    assert_same_bits("quotient(u64, s64)", fn -> Nx.quotient(u.(), d.()) end)
    assert_same_bits("remainder(u64, s64)", fn -> Nx.remainder(u.(), d.()) end)
    shifts = fn -> Nx.tensor([1, 0, 7, 3, 2, 9, 63, 1], type: :s64) end
    assert_same_bits("right_shift(u64, s64)", fn -> Nx.right_shift(u.(), shifts.()) end)
    assert_same_bits("max(u64 + 1, 3)", fn -> Nx.max(Nx.add(u.(), 1), 3) end)
  end

  test "shifts by the width or more shift every bit out; clip orders u64 by value" do
    # GLSL leaves such shifts undefined (hardware takes the amount modulo the width).
    for t <- [:u8, :s16, :u32, :s32, :u64, :s64] do
      x = fn -> Nx.tensor([5, 1, 7, 100, 3, 0, 2, 127], type: t) end
      amounts = fn -> Nx.tensor([0, 8, 31, 32, 33, 63, 64, 70], type: t) end
      assert_same_bits("left_shift(#{t}) past the width", fn -> Nx.left_shift(x.(), amounts.()) end)
      assert_same_bits("right_shift(#{t}) past the width", fn -> Nx.right_shift(x.(), amounts.()) end)
    end

    for t <- [:s8, :s32, :s64] do
      negative = fn -> Nx.tensor([-5, -1, -128, 7, -3, 0, -2, -127], type: t) end
      amounts = fn -> Nx.tensor([0, 8, 31, 32, 33, 63, 64, 70], type: :u32) end
      assert_same_bits("right_shift(#{t}, u32) fills the sign", fn -> Nx.right_shift(negative.(), amounts.()) end)
    end

    # Shift amounts at or above 2^31 (u32) and 2^63 (u64).
    for t <- [:u32, :u64] do
      big = fn -> Nx.tensor([3, 2_147_483_649, 4_294_967_295, 1], type: t) end

      assert_same_bits("right_shift(#{t}) by 2^31 and more", fn ->
        Nx.right_shift(Nx.tensor([5, 5, 7, 6], type: t), big.())
      end)

      assert_same_bits("right_shift(s8, #{t}) by 2^31 and more", fn ->
        Nx.right_shift(Nx.tensor([5, 5, 7, 6], type: :s8), big.())
      end)
    end

    u = fn -> Nx.tensor(@big_u64, type: :u64) end
    assert_same_bits("clip(u64, 3, 3_000_000_000)", fn -> Nx.clip(u.(), 3, 3_000_000_000) end)

    assert_same_bits("clip(u64, s64, s64)", fn ->
      Nx.clip(u.(), Nx.tensor(-4, type: :s64), Nx.tensor(70, type: :s64))
    end)

    assert_same_bits("clip(u64) with min above max", fn ->
      Nx.clip(u.(), Nx.tensor(90, type: :s64), Nx.tensor(70, type: :s64))
    end)
  end

  @wide [16_777_217, 123_456_789, 33_554_435, 7, 2_147_483_647, -2_147_483_647, 100_000_007, -16_777_219]

  test "an integer with a float rounds once, from the integer's value" do
    for it <- [:s32, :u32, :s64], ft <- [:f32, :bf16, :f16] do
      ints = fn -> Nx.tensor(if(it == :u32, do: Enum.map(@wide, &abs/1), else: @wide), type: it) end
      floats = fn -> Nx.tensor([3.0, 0.1, 7.0, 0.3, 1.0e-3, 3.0, 2.5, 0.7], type: ft) end

      for op <- [:add, :subtract, :multiply, :divide, :min, :max, :remainder, :atan2] do
        assert_same_bits("#{op}(#{it}, #{ft})", fn -> apply(Nx, op, [ints.(), floats.()]) end)
        assert_same_bits("#{op}(#{ft}, #{it})", fn -> apply(Nx, op, [floats.(), ints.()]) end)
      end

      # Nx.BinaryBackend raises for a negative base with a fractional exponent.
      assert_same_bits("pow(#{it}, #{ft})", fn -> Nx.pow(Nx.abs(ints.()), floats.()) end)

      assert_same_bits("divide(#{it}, 3.0)", fn -> Nx.divide(ints.(), 3.0) end)
    end

    for it <- [:s32, :u32] do
      ints = fn -> Nx.tensor(Enum.map(@wide, &abs/1), type: it) end
      # 16777217 and 16777216.0 differ; f32 cannot tell them apart.
      near = fn -> Nx.as_type(ints.(), :f32) end

      for op <- [:equal, :greater, :less_equal] do
        assert_same_bits("#{op}(#{it}, f32 of it)", fn -> apply(Nx, op, [ints.(), near.()]) end)
      end

      assert_same_bits("divide(#{it}, #{it})", fn -> Nx.divide(ints.(), Nx.tensor(3, type: it)) end)
    end

    # s16 values past f16's 11 bits, with f16.
    assert_same_bits("multiply(s16, f16)", fn ->
      Nx.multiply(Nx.tensor([2049, 30001, -4097, 7], type: :s16), Nx.tensor([3.0, 0.1, 0.3, 1.5], type: :f16))
    end)
  end

  test "float functions of integers take the integers' values, on the device for s64 and u64 too" do
    vals = %{
      s32: [16_777_217, 123_456_789, 2_147_483_647, 7, 33_554_435, 100_000_007],
      u32: [16_777_217, 123_456_789, 4_294_967_295, 7, 33_554_435, 3_000_000_001],
      s64: [16_777_217, 123_456_789, 9_007_199_254_740_993, 7, 9_223_372_036_854_775_807, 2_147_483_647],
      u64: [16_777_217, 123_456_789, 18_446_744_073_709_551_615, 7, 9_007_199_254_740_993, 2_147_483_648],
      s16: [2049, 32767, 30001, 7, 4097, 1],
      u16: [2049, 65535, 30001, 7, 4097, 1]
    }

    for {t, v} <- vals, op <- [:sin, :cos, :tan, :sqrt, :tanh, :log, :rsqrt, :cbrt, :sigmoid, :atan, :log1p, :erf] do
      assert_same_bits("#{op}(#{t})", fn -> apply(Nx, op, [Nx.tensor(v, type: t)]) end)
    end

    # exp of these overflows, where Nx.BinaryBackend raises: smaller values.
    for t <- [:s32, :u32, :s64, :u64, :s16] do
      assert_same_bits("exp(#{t})", fn -> Nx.exp(Nx.tensor([1, 7, 30, 88, 3, 0], type: t)) end)
    end
  end
end
