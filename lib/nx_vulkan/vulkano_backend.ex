defmodule Nx.Vulkan.VulkanoBackend do
  @moduledoc """
  The name the published intro notebook uses for the backend. Every callback delegates to
  `Nx.Vulkan.Backend`, so tensors created through either name are the same tensors.
  """

  @behaviour Nx.Backend

  for {name, arity} <- Nx.Backend.behaviour_info(:callbacks) do
    args = Macro.generate_arguments(arity, __MODULE__)
    @impl true
    defdelegate unquote(name)(unquote_splicing(args)), to: Nx.Vulkan.Backend
  end
end
