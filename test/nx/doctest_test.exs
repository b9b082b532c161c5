defmodule Nx.Vulkan.DoctestSupport do
  @moduledoc false
  # Nx's own doctests with Nx.Vulkan.Backend as the default backend and the host fallback
  # raising, so a doctest passes only when every op it makes ran on the GPU. Exclusions
  # are by function, each group with its reason; the README records the counts.

  # Complex (c64/c128) and f8 types have no Vulkan storage yet (conv: its last example is
  # complex; the others pass, and test/nx/conv_test.exs covers conv's options).
  def no_complex_or_f8_storage do
    [conv: 3, as_type: 2, bitcast: 2, bit_size: 1, complex: 2, conjugate: 1, imag: 1, real: 1, phase: 1] ++
      [is_nan: 1, is_infinity: 1, tensor: 2, sigil_MAT: 2, sigil_VEC: 2] ++
      [fft: 2, ifft: 2, fft2: 2, ifft2: 2, rfft: 2, irfft: 2]
  end

  # Ops with no Vulkan kernel yet.
  def no_kernel_yet do
    [reduce: 4, window_reduce: 5]
  end

  @doc "For a test's `setup`: Nx.Vulkan.Backend is the default and the fallback raises."
  def on_the_gpu do
    Nx.default_backend(Nx.Vulkan.Backend)
    Nx.Vulkan.NxHelpers.raise_on_fallback()
  end

  # Precision: the printed f32 differs in the last digit (log/exp in logsumexp use the
  # driver's f32 built-ins).
  def precision, do: [logsumexp: 2] ++ f64_reference_off()

  # Our f64 math is correctly rounded (checked against mpmath in
  # native/nx_vulkan/tests/math64.rs); these doctests print a value 1 ulp away, from
  # glibc (sinh, acosh, atanh, erfc) or Nx's formulas (expm1 as exp(x) - 1, sigmoid as
  # 1 / (1 + exp(-x))), and erf_inv's from Giles' single-precision approximation
  # evaluated in f64 (0.0888559878 for 0.0888559905).
  def f64_reference_off do
    [expm1: 1, sigmoid: 1, sinh: 1, acosh: 1, atanh: 1, erfc: 1, erf_inv: 1]
  end
end

defmodule Nx.Vulkan.DoctestTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()
  import Nx.Vulkan.DoctestSupport

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  doctest Nx, except: no_complex_or_f8_storage() ++ no_kernel_yet() ++ precision()
end

defmodule Nx.Vulkan.DoctestLinAlgTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  # Complex examples (no c64 storage yet; exclusion is per function, so their real
  # examples are excluded too): triangular_solve, cholesky, determinant, matrix_rank,
  # norm, least_squares, adjoint. Precision (1-2 ulp in the printed f32, from the order
  # of f32 accumulations in dot and the QR/SVD iterations): lu, pinv, matrix_power.
  doctest Nx.LinAlg,
    except:
      [triangular_solve: 3, cholesky: 1, determinant: 1, matrix_rank: 2, norm: 2] ++
        [least_squares: 3, adjoint: 1, lu: 1, pinv: 2, matrix_power: 2]
end

defmodule Nx.Vulkan.DoctestRandomTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  # normal/uniform: complex examples; gumbel, multivariate_normal: 1-ulp printed f32.
  doctest Nx.Random, except: [normal: 4, uniform: 4, gumbel: 2, multivariate_normal: 4]
end

defmodule Nx.Vulkan.DoctestConstantsTest do
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  setup do: Nx.Vulkan.DoctestSupport.on_the_gpu()

  # Their doctests create f8 or complex tensors (no Vulkan storage yet).
  doctest Nx.Constants,
    except:
      [e: 2, epsilon: 2, euler_gamma: 2, infinity: 2, nan: 2, neg_infinity: 2, pi: 2, i: 2] ++
        [smallest_positive_normal: 2]
end
