defmodule Nx.Vulkan.VulkanoBackend do
  @moduledoc """
  The backend under the name the published intro notebook uses.

      x_vk = Nx.backend_transfer(Nx.tensor([1.0, 2.0]), Nx.Vulkan.VulkanoBackend)
      x_vk.data.__struct__
      #=> Nx.Vulkan.VulkanoBackend

  This module is also the struct of every device tensor: tensors made through
  `Nx.Vulkan.Backend` and through this name are the same kind of tensor on the same
  engine, so they mix in one op with no copy, and a transfer between the two names
  returns the tensor as it is. Every callback runs `Nx.Vulkan.Backend`'s implementation.
  """

  @behaviour Nx.Backend

  @typedoc "A device tensor's data: a reference to its buffer in the engine."
  @type t :: %__MODULE__{ref: reference()}
  defstruct [:ref]

  for {name, arity} <- Nx.Backend.behaviour_info(:callbacks) do
    args = Macro.generate_arguments(arity, __MODULE__)
    @impl true
    defdelegate unquote(name)(unquote_splicing(args)), to: Nx.Vulkan.Backend
  end
end
