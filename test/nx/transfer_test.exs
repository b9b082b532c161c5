defmodule Nx.Vulkan.TransferTest do
  # Transfers away from the device, explicit deallocation, and where device memory goes.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  @mib 1024 * 1024

  # Device bytes held by live tensors, once the tensors of dead processes are released
  # (a resource's destructor runs when the last heap that references it is collected).
  defp live_bytes_settled(expected) do
    Enum.reduce_while(1..100, nil, fn _, _ ->
      :erlang.garbage_collect()
      live = Nx.Vulkan.stats().live_bytes
      if live == expected, do: {:halt, live}, else: Process.sleep(10) && {:cont, live}
    end)
  end

  defp baseline do
    :erlang.garbage_collect()
    Nx.Vulkan.synchronize()
    Nx.Vulkan.stats().live_bytes
  end

  test "a transfer away leaves the source usable; its memory returns when it is collected" do
    base = baseline()

    Task.async(fn ->
      t = Nx.iota({1024, 1024}, type: :f32, backend: Nx.Vulkan.Backend)
      host = Nx.backend_transfer(t, Nx.BinaryBackend)
      assert %Nx.BinaryBackend{} = host.data
      assert Nx.Vulkan.stats().live_bytes >= base + 4 * @mib
      # The source still works, as on Nx.BinaryBackend.
      assert Nx.to_number(Nx.sum(t)) == Nx.to_number(Nx.sum(host))
      assert Nx.to_flat_list(Nx.slice(t, [0, 0], [1, 3])) == [0.0, 1.0, 2.0]
    end)
    |> Task.await()

    assert live_bytes_settled(base) == base
  end

  test "the seed intro's pattern: a gradient transferred to the host, then used again" do
    g = Nx.tensor([[0.5, -1.0], [2.0, 0.25]], backend: Nx.Vulkan.VulkanoBackend)
    assert Nx.to_number(Nx.sum(Nx.backend_transfer(g, Nx.BinaryBackend))) == 1.75
    want = Nx.multiply(Nx.tensor([[0.5, -1.0], [2.0, 0.25]]), Nx.tensor(0.01))
    assert Nx.to_flat_list(Nx.multiply(g, Nx.tensor(0.01))) == Nx.to_flat_list(want)
  end

  test "Nx.backend_deallocate/1 frees at once; a later use raises a clear error" do
    base = baseline()
    t = Nx.iota({512, 1024}, type: :f32, backend: Nx.Vulkan.Backend)
    Nx.Vulkan.synchronize()
    assert Nx.Vulkan.stats().live_bytes >= base + 2 * @mib
    assert Nx.backend_deallocate(t) == :ok
    assert Nx.Vulkan.stats().live_bytes == base
    assert Nx.backend_deallocate(t) == :already_deallocated
    assert_raise ArgumentError, ~r/multiply\(f32\{512, 1024\}.*deallocated/, fn -> Nx.multiply(t, 2.0) end
  end

  test "free_on_transfer: true frees the source at the transfer (EXLA's behaviour)" do
    Application.put_env(:nx_vulkan, :free_on_transfer, true)
    on_exit(fn -> Application.delete_env(:nx_vulkan, :free_on_transfer) end)
    base = baseline()
    t = Nx.iota({512, 1024}, type: :f32, backend: Nx.Vulkan.Backend)
    host = Nx.backend_transfer(t, Nx.BinaryBackend)
    assert Nx.to_flat_list(Nx.slice(host, [0, 1], [1, 2])) == [1.0, 2.0]
    assert Nx.Vulkan.stats().live_bytes == base
    assert_raise ArgumentError, ~r/deallocated/, fn -> Nx.sum(t) end
  end

  test "Nx.Vulkan.VulkanoBackend is a backend of its own that mixes with Nx.Vulkan.Backend" do
    x = Nx.backend_transfer(Nx.tensor([1.0, 2.0, 3.0]), Nx.Vulkan.VulkanoBackend)
    y = Nx.tensor([10.0, 20.0, 30.0], backend: Nx.Vulkan.Backend)
    assert x.data.__struct__ == Nx.Vulkan.VulkanoBackend
    assert y.data.__struct__ == Nx.Vulkan.VulkanoBackend
    # No copy between the names: the same device buffer.
    assert Nx.backend_transfer(x, Nx.Vulkan.Backend).data.ref == x.data.ref
    assert Nx.to_flat_list(Nx.add(x, y)) == [11.0, 22.0, 33.0]
    z = Nx.multiply(x, y)
    assert z.data.__struct__ == Nx.Vulkan.VulkanoBackend
    assert Nx.to_flat_list(z) == [10.0, 40.0, 90.0]
  end
end
