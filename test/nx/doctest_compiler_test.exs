defmodule Nx.Vulkan.DoctestCompilerTest do
  # Nx's doctests again with Nx.Vulkan.Compiler as the defn compiler: every function Nx
  # implements with defn (much of Nx.LinAlg and Nx.Random) goes through the fusion pass
  # and runs its fusion groups as fused kernels. Same exclusions as doctest_test.exs.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  import Nx.Vulkan.DoctestSupport

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu_compiled()

  doctest Nx, except: precision()
end

defmodule Nx.Vulkan.DoctestCompilerLinAlgTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu_compiled()

  doctest Nx.LinAlg
end

defmodule Nx.Vulkan.DoctestCompilerRandomTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu_compiled()

  doctest Nx.Random
end
