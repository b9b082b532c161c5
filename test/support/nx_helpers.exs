defmodule Nx.Vulkan.NxHelpers do
  @moduledoc false
  # Helpers for the tests that need Nx (test/nx); loaded only where Nx is.

  @doc "For a test's `setup`: the host fallback raises during the test, then goes back."
  def raise_on_fallback do
    previous = Nx.Vulkan.set_fallback(:raise)
    ExUnit.Callbacks.on_exit(fn -> Nx.Vulkan.set_fallback(previous) end)
    :ok
  end

  @doc "`t` on the GPU."
  def gpu(t), do: Nx.backend_transfer(t, Nx.Vulkan.Backend)

  @doc "`t` back on the host."
  def host(t), do: Nx.backend_transfer(t, Nx.BinaryBackend)
end
