defmodule Nx.Vulkan.NativeV do
  @moduledoc """
  Low-level calls of the seed package's published contract: raw buffers (the intro
  notebook) and leapfrog chains in a caller's own SPIR-V (eXMC's Vulkan mode).

  `buf_alloc/1` returns `{:ok, ref}` with an uninitialised device buffer of the given
  size in bytes; `buf_write/1` and `buf_read/1` move bytes in and out.

  ## Leapfrog chains

  `leapfrog_chain_synth_f64/6` runs `k` leapfrog steps of one Hamiltonian trajectory in a
  compute kernel the caller compiled (eXMC generates its GLSL per model and compiles it
  with `glslangValidator`). The kernel's descriptor set 0 binds seven storage buffers:
  0 `q` and 1 `p` (the start, `d` f64 each), 2 `extras` (`n_obs` observations, then
  the `d` inverse-mass diagonal), and the outputs 3 `q_chain`, 4 `p_chain`,
  5 `grad_chain` (`k x d` f64, row `j` after step `j + 1`) and 6 `logp_chain` (`k` f64).
  `push` starts with `<<k::u32, n_obs::u32, d::u32, 0::u32, eps::f64>>` (little-endian,
  `eps` signed by the direction) and may carry up to 128 bytes; the kernel's own block
  decides how many it reads. One workgroup runs the chain, one invocation per coordinate.

  The results are binaries of little-endian f64: `{:ok, {q_chain, p_chain, grad_chain,
  logp_chain}}`. Errors: `{:error, :size_mismatch}` (`q` and `p` differ),
  `{:error, :bad_input}` (`k` of 0 or not an integer, a push block outside 24..128
  bytes, sizes that disagree with its `d` and `n_obs`), `{:error, :vulkan_init_failed,
  message}` and `{:error, :dispatch_failed, message}` (an unreadable file, a module that
  is not SPIR-V or does not bind buffers 0-6, a device without f64). The call runs on a
  dirty scheduler.
  """

  alias Nx.Vulkan.Native

  @doc "Allocates `bytes` bytes of device memory: `{:ok, ref}` or `{:error, reason}`."
  @spec buf_alloc(non_neg_integer()) :: {:ok, reference()} | {:error, term()}
  def buf_alloc(bytes) when is_integer(bytes) and bytes >= 0 do
    Native.announce()
    Native.t_alloc(bytes)
  end

  def buf_alloc(bytes),
    do: raise(ArgumentError, "buf_alloc expects a non-negative byte count, got: #{inspect(bytes)}")

  @doc "Uploads a binary into a new device buffer: `{:ok, ref}`."
  @spec buf_write(binary()) :: {:ok, reference()} | {:error, term()}
  def buf_write(binary) when is_binary(binary),
    do: Native.t_from_binary(binary, [byte_size(binary)], "u8")

  @doc "Reads a buffer back: `{:ok, binary}`."
  @spec buf_read(reference()) :: {:ok, binary()} | {:error, term()}
  def buf_read(ref), do: Native.t_to_binary(ref, nil)

  @doc """
  `k` leapfrog steps of the chain kernel in the SPIR-V file `spv_path`, from `q` and
  `p` (see the module doc for the layouts and errors).
  """
  @spec leapfrog_chain_synth_f64(binary(), binary(), binary(), binary(), non_neg_integer(), Path.t()) ::
          {:ok, {binary(), binary(), binary(), binary()}}
          | {:error, :size_mismatch | :bad_input}
          | {:error, :vulkan_init_failed | :dispatch_failed, String.t()}
  def leapfrog_chain_synth_f64(q, p, extras, push, k, spv_path), do: chain(q, p, extras, push, k, spv_path, false)

  @doc """
  `leapfrog_chain_synth_f64/6` for `n_instances` chains at once (one workgroup each):
  `push` carries `n_instances` in its fourth u32, `q`, `p` and `extras` are the chains'
  inputs concatenated, and each output is the chains' outputs concatenated (chain `i`'s
  rows at `i * k * d` f64). Each chain's bytes are those of its own single call.
  """
  @spec leapfrog_chain_synth_batch_f64(binary(), binary(), binary(), binary(), non_neg_integer(), Path.t()) ::
          {:ok, {binary(), binary(), binary(), binary()}}
          | {:error, :size_mismatch | :bad_input}
          | {:error, :vulkan_init_failed | :dispatch_failed, String.t()}
  def leapfrog_chain_synth_batch_f64(q, p, extras, push, k, spv_path),
    do: chain(q, p, extras, push, k, spv_path, true)

  defp chain(q, p, extras, push, k, spv_path, batched)
       when is_binary(q) and is_binary(p) and is_binary(extras) and is_binary(push) and is_integer(k) and k >= 0 and
              k < 4_294_967_296 and (is_binary(spv_path) or is_list(spv_path)) do
    Native.announce()
    Native.chain_leapfrog_f64(q, p, extras, push, k, IO.chardata_to_string(spv_path), batched)
  end

  defp chain(_q, _p, _extras, _push, _k, _spv_path, _batched), do: {:error, :bad_input}
end
