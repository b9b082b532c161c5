defmodule Nx.Vulkan.DoctestTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  import Nx.Vulkan.DoctestSupport

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  doctest Nx, except: precision()
end

defmodule Nx.Vulkan.DoctestLinAlgTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  doctest Nx.LinAlg
end

defmodule Nx.Vulkan.DoctestRandomTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  doctest Nx.Random
end

defmodule Nx.Vulkan.DoctestConstantsTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  doctest Nx.Constants
end
