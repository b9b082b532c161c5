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

  @doc """
  `fun` jitted with Nx.Vulkan.Compiler and `opts` (not recorded, so each call launches
  op by op or kernel by kernel), called on `args` twice: the second call's result and
  the launches it made.
  """
  def compiled_launches(fun, args, opts \\ []) do
    compiled = Nx.Defn.jit(fun, [compiler: Nx.Vulkan.Compiler, record: false] ++ opts)
    _ = apply(compiled, args)
    Nx.Vulkan.synchronize()
    before = Nx.Vulkan.stats().dispatches
    result = apply(compiled, args)
    Nx.Vulkan.synchronize()
    {result, Nx.Vulkan.stats().dispatches - before}
  end
end

defmodule Nx.Vulkan.DoctestSupport do
  @moduledoc false
  # Nx's own doctests with Nx.Vulkan.Backend as the default backend and the host fallback
  # raising, so a doctest passes only when every op it makes ran on the GPU. Exclusions
  # are by function, each group with its reason; the README records the counts.

  @doc "For a test's `setup`: Nx.Vulkan.Backend is the default and the fallback raises."
  def on_the_gpu do
    Nx.default_backend(Nx.Vulkan.Backend)
    Nx.Vulkan.NxHelpers.raise_on_fallback()
  end

  @doc "`on_the_gpu/0`, with Nx.Vulkan.Compiler as the process's defn compiler."
  def on_the_gpu_compiled do
    Nx.Defn.default_options(compiler: Nx.Vulkan.Compiler)
    on_the_gpu()
  end

  # Precision: the f64 functions below (f32 math is computed in double and rounded once,
  # Nx's own values; with NX_VULKAN_F32_MATH=native logsumexp and Nx.Random's gumbel,
  # normal and multivariate_normal print a last digit off).
  def precision, do: f64_reference_off()

  # Our f64 math is correctly rounded (checked against mpmath in
  # native/nx_vulkan/tests/math64.rs); these doctests print a value 1 ulp away, from
  # glibc (sinh, acosh, atanh, erfc) or Nx's formulas (expm1 as exp(x) - 1, sigmoid as
  # 1 / (1 + exp(-x))), and erf_inv's from Giles' single-precision approximation
  # evaluated in f64 (0.0888559878 for 0.0888559905).
  def f64_reference_off do
    [expm1: 1, sigmoid: 1, sinh: 1, acosh: 1, atanh: 1, erfc: 1, erf_inv: 1]
  end
end
