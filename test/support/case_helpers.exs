defmodule Nx.Vulkan.TestSupport do
  @moduledoc false
  # Shared by the offline runner and `mix test`.

  @doc "Module tags for tests that need Nx: skipped (with the reason) when Nx is absent."
  def nx_tags do
    if Code.ensure_loaded?(Nx),
      do: [],
      else: [skip: "Nx is not installed here (hex.pm unreachable); runs wherever `mix deps.get` works"]
  end
end
