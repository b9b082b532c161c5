defmodule Nx.Vulkan.NativeTest do
  # The NIF from plain Elixir: no Nx needed.
  use ExUnit.Case, async: false

  import Bitwise
  alias Nx.Vulkan.{Native, NativeV}

  defp f32(list), do: for(x <- list, into: <<>>, do: <<x::float-32-little>>)
  defp s32(list), do: for(x <- list, into: <<>>, do: <<x::signed-32-little>>)
  defp to_f32(bin), do: for(<<x::float-32-little <- bin>>, do: x)

  test "init names a device and device_info describes it" do
    assert {:ok, name} = Native.dev_init()
    assert is_binary(name) and name != ""
    assert {:ok, info} = Native.dev_info()
    assert info.name == name
    assert info.type in ~w(discrete integrated virtual cpu other)
    assert is_boolean(info.f64) and is_boolean(info.int64) and is_boolean(info.cooperative_matrix)
    assert [%{size: size} | _] = info.heaps
    assert size > 0
    assert [x, _, _] = info.max_workgroup_count
    assert x >= 65_535
  end

  test "buf_alloc from the intro returns {:ok, ref}" do
    assert {:ok, ref} = NativeV.buf_alloc(4096)
    assert is_reference(ref)
    assert {:ok, ref} = NativeV.buf_write(<<1, 2, 3>>)
    assert {:ok, <<1, 2, 3>>} = NativeV.buf_read(ref)
    assert_raise ArgumentError, fn -> NativeV.buf_alloc(-1) end
  end

  test "binary round trip and an add on the GPU" do
    {:ok, a} = Native.t_from_binary(f32([1.0, 2.0, 3.0, 4.0]), [4], "f32")
    {:ok, b} = Native.t_from_binary(f32([10.0, 20.0, 30.0, 40.0]), [4], "f32")
    {:ok, c} = Native.t_binary("add", a, b, [4], "f32")
    assert {:ok, bin} = Native.t_to_binary(c, nil)
    assert to_f32(bin) == [11.0, 22.0, 33.0, 44.0]
    assert {:ok, <<_::binary-size(8)>>} = Native.t_to_binary(c, 8)
    assert {:ok, {[4], "f32"}} = Native.t_info(c)
  end

  test "hot calls run on the normal scheduler, and move to a dirty one when they would block" do
    {:ok, a} = Native.t_from_binary(f32([1.0, 2.0]), [2], "f32")
    {:ok, b} = Native.t_binary("multiply", a, a, [2], "f32")
    {:ok, _} = Native.t_to_binary(b, nil)
    # Two idle blocks of this size class in the pool (on lavapipe an upload touches no GPU
    # work, so a deallocated one goes straight back), the pipeline built, the GPU idle:
    # the normal-scheduler twins complete.
    spares = for _ <- 1..2, do: elem(Native.t_from_binary(f32([0.0, 0.0]), [2], "f32"), 1)
    assert Enum.all?(spares, &Native.t_deallocate/1)

    {:ok, a} = Native.t_from_binary_nb(f32([3.0, 4.0]), [2], "f32")
    assert {:ok, c} = Native.t_binary_nb("multiply", a, a, [2], "f32")
    assert {:ok, f32([9.0, 16.0])} == Native.t_to_binary(c, nil)
    # 4 MiB is too much to copy on a normal scheduler: the twin declines, the wrapper
    # retries on a dirty one.
    big = :binary.copy(f32([0.5]), 1 <<< 20)
    assert :would_block = Native.t_from_binary_nb(big, [1 <<< 20], "f32")
    assert {:ok, t} = Native.t_from_binary(big, [1 <<< 20], "f32")
    assert :would_block = Native.t_to_binary_nb(t, nil)
    assert {:ok, ^big} = Native.t_to_binary(t, nil)
    # Errors come back as errors from either twin.
    assert {:error, {:invalid_argument, _}} = Native.t_binary_nb("add", a, t, [2], "f32")
  end

  test "sum of iota({4, 4}) and per-column sums" do
    {:ok, t} = Native.t_iota([4, 4], "f32", nil)
    {:ok, all} = Native.t_reduce("sum", t, nil, false, "f32")
    assert {:ok, <<120.0::float-32-little>>} = Native.t_to_binary(all, nil)
    {:ok, cols} = Native.t_reduce("sum", t, [0], false, "f32")
    assert {:ok, bin} = Native.t_to_binary(cols, nil)
    assert to_f32(bin) == [24.0, 28.0, 32.0, 36.0]
  end

  test "dot of iota 2x3 and 3x2" do
    {:ok, a} = Native.t_iota([2, 3], "f32", nil)
    {:ok, b} = Native.t_iota([3, 2], "f32", nil)
    {:ok, c} = Native.t_dot(a, [1], [], b, [0], [], "f32")
    assert {:ok, bin} = Native.t_to_binary(c, nil)
    assert to_f32(bin) == [10.0, 13.0, 28.0, 40.0]
  end

  test "complex numbers: constant, arithmetic, conjugate, fft" do
    {:ok, z} = Native.t_constant([2], "c64", {1.5, -2.0})
    {:ok, w} = Native.t_from_binary(f32([0.0, 1.0, 2.0, 0.0]), [2], "c64")
    {:ok, p} = Native.t_binary("multiply", z, w, [2], "c64")
    # (1.5 - 2i) i = 2 + 1.5i; (1.5 - 2i) 2 = 3 - 4i
    assert {:ok, f32([2.0, 1.5, 3.0, -4.0])} == Native.t_to_binary(p, nil)
    {:ok, c} = Native.t_unary("conjugate", p, "c64")
    assert {:ok, f32([2.0, -1.5, 3.0, 4.0])} == Native.t_to_binary(c, nil)
    {:ok, x} = Native.t_from_binary(s32([1, 1, 0, 0]), [4], "s32")
    {:ok, f} = Native.t_fft(x, false, 4, 0, 1.0e-10, "c64")
    assert {:ok, f32([2.0, 0.0, 1.0, -1.0, 0.0, 0.0, 1.0, 1.0])} == Native.t_to_binary(f, nil)
  end

  describe "bad input is an error tuple naming the problem, never a crash" do
    test "binary of the wrong size" do
      assert {:error, {:invalid_argument, msg}} = Native.t_from_binary(<<1, 2, 3>>, [4], "f32")
      assert msg =~ "from_binary" and msg =~ "[4]" and msg =~ "f32"
    end

    test "unknown types and sub-byte binaries of the wrong size" do
      assert {:error, {:invalid_argument, msg}} = Native.t_from_binary(<<>>, [0], "q7")
      assert msg =~ "q7"
      # Four u2 elements pack into one byte; five need two.
      assert {:ok, _} = Native.t_from_binary(<<0::8>>, [4], "u2")
      assert {:error, {:invalid_argument, msg}} = Native.t_from_binary(<<0::8>>, [5], "u2")
      assert msg =~ "u2"
    end

    test "shapes that do not fit" do
      {:ok, a} = Native.t_from_binary(s32([1, 2, 3]), [3], "s32")
      {:ok, b} = Native.t_from_binary(s32([1, 2, 3, 4]), [4], "s32")
      assert {:error, {:invalid_argument, msg}} = Native.t_binary("add", a, b, [4], "s32")
      assert msg =~ "[3]" and msg =~ "[4]"
      assert {:error, {:invalid_argument, _}} = Native.t_reshape(a, [2, 2])
      assert {:error, {:invalid_argument, _}} = Native.t_transpose(a, [1])
      assert {:error, {:invalid_argument, _}} = Native.t_reduce("sum", a, [3], false, "s32")
      assert {:error, {:invalid_argument, _}} = Native.t_dot(a, [0], [], b, [0], [], "s32")
    end

    test "an absurd allocation is refused" do
      assert {:error, {kind, msg}} = Native.t_constant([1_000_000, 1_000_000, 600], "f32", 0.0)
      assert kind in [:invalid_argument, :out_of_memory]
      assert msg =~ "constant"
    end

    test "terms of the wrong kind raise ArgumentError" do
      assert_raise ArgumentError, fn -> Native.t_from_binary(:nope, [1], "u8") end
      assert_raise ArgumentError, fn -> Native.t_iota(:not_a_list, "f32", nil) end
    end

    test "a deallocated tensor" do
      {:ok, a} = Native.t_from_binary(s32([1]), [1], "s32")
      assert Native.t_deallocate(a)
      refute Native.t_deallocate(a)
      assert {:error, {:invalid_argument, msg}} = Native.t_to_binary(a, nil)
      assert msg =~ "deallocated"
    end
  end

  test "many processes share the device" do
    tasks =
      for i <- 1..16 do
        Task.async(fn ->
          for j <- 1..50 do
            {:ok, a} = Native.t_from_binary(s32([i, j, 1]), [3], "s32")
            {:ok, b} = Native.t_binary("multiply", a, a, [3], "s32")
            {:ok, s} = Native.t_reduce("sum", b, nil, false, "s32")
            {:ok, <<v::signed-32-little>>} = Native.t_to_binary(s, nil)
            assert v == i * i + j * j + 1
          end

          :ok
        end)
      end

    assert Enum.all?(Task.await_many(tasks, 60_000), &(&1 == :ok))
  end

  test "memory is pooled and reused" do
    {:ok, before} = Native.dev_stats()

    for _ <- 1..200 do
      {:ok, _} = Native.t_constant([1000], "f32", 1.0)
    end

    :erlang.garbage_collect()
    {:ok, t} = Native.t_constant([1000], "f32", 2.0)
    {:ok, _} = Native.t_to_binary(t, 4)
    {:ok, after_} = Native.dev_stats()
    assert after_.buffers_reused > before.buffers_reused
  end

  test "a loop whose results die each iteration reuses their buffers without a dirty scheduler" do
    # A process with a large heap (as an application's is) collects rarely on its own:
    # its dead results keep their buffers, and without a collection on a pool miss every
    # iteration past the idle buffers moved to a dirty scheduler to create a new one.
    {:ok, t} = Native.t_constant([1000], "f32", 1.0)
    parent = self()

    Process.spawn(
      fn ->
        step = fn -> {:ok, _} = Native.t_binary("add", t, t, [1000], "f32") end
        for _ <- 1..5, do: step.()
        {:ok, _} = Native.dev_synchronize()
        {:ok, before} = Native.dev_stats()

        for _ <- 1..100 do
          step.()
          # The batch ends (as a loop that reads a loss does): the buffer may be reused.
          {:ok, _} = Native.dev_synchronize()
        end

        {:ok, after_} = Native.dev_stats()
        send(parent, {:counts, before, after_})
      end,
      min_heap_size: 200_000
    )

    assert_receive {:counts, before, after_}, 30_000
    # (Old code: ~95 new buffers, each on a dirty scheduler. A collection can miss the
    # last result while a register still holds it: some calls still move.)
    assert after_.buffers_created - before.buffers_created <= 2
    assert after_.dirty_retries - before.dirty_retries <= 30
    assert after_.collects > before.collects
  end

  test "a large new buffer first collects the caller, so dead tensors' buffers are reused" do
    # 16 MiB outputs (memory::DEVICE_ONLY_BYTES), kept per burst as a `for` keeps them.
    # Without the collection the BEAM freed them only when it collected on its own: bursts
    # of ten created ten new buffers each until then.
    {:ok, t} = Native.t_constant([4 <<< 20], "f32", 1.0)
    {:ok, before} = Native.dev_stats()

    for _ <- 1..5 do
      _kept = for _ <- 1..10, do: Native.t_binary("add", t, t, [4 <<< 20], "f32")
      {:ok, _} = Native.dev_synchronize()
    end

    {:ok, after_} = Native.dev_stats()
    # (Spare buffers, made ahead of need by a background thread, are not counted.)
    own = fn s -> s.buffers_created - s.spares_created end
    assert own.(after_) - own.(before) <= 20
    assert after_.buffers_reused - before.buffers_reused >= 30
  end
end
