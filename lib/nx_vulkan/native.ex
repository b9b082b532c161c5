defmodule Nx.Vulkan.Native do
  @moduledoc false
  # NIF stubs. Under Mix the library comes from rustler_precompiled: a download checked
  # against checksum-Elixir.Nx.Vulkan.Native.exs, or a source build through rustler when
  # NX_VULKAN_BUILD=true or the version is a -dev one. Without Mix (plain `elixir`, as the
  # offline test runner uses) it loads priv/native/libnx_vulkan.so, built by scripts/build_nif.

  version =
    if Code.ensure_loaded?(Mix.Project) and is_pid(Process.whereis(Mix.ProjectStack)),
      do: Mix.Project.config()[:version] || "0.1.0-dev",
      else: "0.1.0-dev"

  require Nx.Vulkan.Native.Path

  Nx.Vulkan.Native.Path.load_library(
    otp_app: :nx_vulkan,
    crate: "nx_vulkan",
    base_url: "https://github.com/nx-vulkan/nx_vulkan/releases/download/v#{version}",
    version: version,
    force_build: System.get_env("NX_VULKAN_BUILD") in ["1", "true"] or String.ends_with?(version, "-dev"),
    nif_versions: ["2.15"],
    targets: ~w(aarch64-apple-darwin x86_64-apple-darwin aarch64-unknown-linux-gnu
                x86_64-unknown-linux-gnu x86_64-pc-windows-msvc x86_64-unknown-freebsd)
  )

  defp err, do: :erlang.nif_error(:nif_not_loaded)

  def dev_init, do: err()
  def dev_info, do: err()
  def dev_stats, do: err()
  def dev_synchronize, do: err()

  def t_from_binary(_binary, _shape, _type), do: err()
  def t_alloc(_bytes), do: err()
  def t_to_binary(_ref, _limit), do: err()
  def t_deallocate(_ref), do: err()
  def t_info(_ref), do: err()
  def t_constant(_shape, _type, _value), do: err()
  def t_iota(_shape, _type, _axis), do: err()
  def t_eye(_shape, _type), do: err()
  def t_reshape(_ref, _shape), do: err()
  def t_broadcast(_ref, _shape, _axes), do: err()
  def t_transpose(_ref, _axes), do: err()
  def t_as_type(_ref, _type), do: err()
  def t_unary(_op, _ref, _type), do: err()
  def t_binary(_op, _a, _b, _shape, _type), do: err()
  def t_reduce(_op, _ref, _axes, _keep, _type), do: err()
  def t_window(_op, _ref, _dims, _strides, _padding, _dilations, _type), do: err()
  def t_window_scatter(_is_min, _ref, _source, _init, _dims, _strides, _padding, _type), do: err()
  def t_argreduce(_ref, _axis, _keep, _is_min, _tie_high, _type), do: err()
  def t_conv(_input, _kernel, _opts, _type), do: err()
  def t_triangular_solve(_a, _b, _left_side, _lower, _transform_a, _type), do: err()
  def t_dot(_a, _ca, _ba, _b, _cb, _bb, _type), do: err()
  def t_slice(_ref, _start, _lengths, _strides), do: err()
  def t_put_slice(_ref, _start, _update, _type), do: err()
  def t_concatenate(_refs, _axis, _type), do: err()
  def t_reverse(_ref, _axes), do: err()
  def t_pad(_ref, _value, _config, _type), do: err()
  def t_select(_pred, _on_true, _on_false, _shape, _type), do: err()
  def t_clip(_ref, _min, _max, _type), do: err()
  def t_gather(_ref, _indices, _axes), do: err()
  def t_indexed(_put, _target, _indices, _updates, _axes, _type), do: err()
  def t_sort(_ref, _axis, _desc, _indices, _type), do: err()
  def t_bitcast(_ref, _type), do: err()
  def t_fft(_ref, _inverse, _length, _axis, _eps, _type), do: err()
  def t_fused(_type, _shape, _row_axes, _per_row, _slots, _inputs), do: err()
end
