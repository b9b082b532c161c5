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

  # Where the precompiled archives are: NX_VULKAN_BASE_URL or `config :nx_vulkan,
  # :base_url` (a mirror, or a folder served inside an air-gapped site), else the release.
  base_url =
    System.get_env("NX_VULKAN_BASE_URL") ||
      Application.compile_env(
        :nx_vulkan,
        :base_url,
        "https://github.com/nx-vulkan/nx_vulkan/releases/download/v#{version}"
      )

  require Nx.Vulkan.Native.Path

  Nx.Vulkan.Native.Path.load_library(
    otp_app: :nx_vulkan,
    crate: "nx_vulkan",
    base_url: base_url,
    version: version,
    force_build: System.get_env("NX_VULKAN_BUILD") in ["1", "true"] or String.ends_with?(version, "-dev"),
    nif_versions: ["2.15", "2.16", "2.17"],
    targets: ~w(aarch64-apple-darwin x86_64-apple-darwin
                aarch64-unknown-linux-gnu x86_64-unknown-linux-gnu
                aarch64-unknown-linux-musl x86_64-unknown-linux-musl
                x86_64-unknown-freebsd x86_64-pc-windows-msvc)
  )

  defp err, do: :erlang.nif_error(:nif_not_loaded)

  def dev_init, do: err()
  def dev_announce, do: err()
  def dev_pipeline_cache, do: err()
  def dev_load_pipeline_cache(_bytes), do: err()
  def chain_leapfrog_f64(_q, _p, _extras, _push, _k, _spv_path, _batched), do: err()
  def dev_info, do: err()
  def dev_stats, do: err()
  def dev_synchronize, do: err()
  def dev_profile, do: err()

  def t_alloc(_bytes), do: err()
  def t_deallocate(_ref), do: err()
  def t_info(_ref), do: err()
  def t_reshape(_ref, _shape), do: err()
  def t_window(_op, _ref, _dims, _strides, _padding, _dilations, _type), do: err()
  def t_window_scatter(_is_min, _ref, _source, _init, _dims, _strides, _padding, _type), do: err()
  def t_conv(_input, _kernel, _opts, _type), do: err()
  def t_triangular_solve(_a, _b, _left_side, _lower, _transform_a, _type), do: err()
  def t_indexed(_put, _target, _indices, _updates, _axes, _type), do: err()
  def t_sort(_ref, _axis, _desc, _indices, _type), do: err()
  def t_fft(_ref, _inverse, _length, _axis, _eps, _type), do: err()

  def p_capture_begin(_inputs), do: err()
  def p_capture_input(_index, _ref), do: err()
  def p_capture_end(_outputs), do: err()
  def p_capture_abort, do: err()
  def p_info(_program), do: err()

  # Twin NIFs (native/nx_vulkan/src/nif/twin.rs): `name_nb` runs on the caller's normal
  # scheduler and answers :would_block where it would have to wait (a pipeline build, a
  # long GPU wait, a large copy); `name_dirty` is the same call on a dirty scheduler.
  # `name` tries the first, then the second. Where the pool had no idle buffer for a new
  # tensor, the first answers {:would_block_collect, size}: `name` collects the caller's
  # garbage (its dead tensors' buffers go back to the pool) and tries the first again
  # before the second.
  twins = [
    t_from_binary: [:binary, :shape, :type],
    t_to_binary: [:ref, :limit],
    t_constant: [:shape, :type, :value],
    t_iota: [:shape, :type, :axis],
    t_eye: [:shape, :type],
    t_broadcast: [:ref, :shape, :axes],
    t_transpose: [:ref, :axes],
    t_as_type: [:ref, :type],
    t_unary: [:op, :ref, :type],
    t_binary: [:op, :a, :b, :shape, :type],
    t_reduce: [:op, :ref, :axes, :keep, :type],
    t_argreduce: [:ref, :axis, :keep, :is_min, :tie_high, :type],
    t_dot: [:a, :ca, :ba, :b, :cb, :bb, :type],
    t_slice: [:ref, :start, :lengths, :strides],
    t_put_slice: [:ref, :start, :update, :type],
    t_concatenate: [:refs, :axis, :type],
    t_reverse: [:ref, :axes],
    t_pad: [:ref, :value, :config, :type],
    t_select: [:pred, :on_true, :on_false, :shape, :type],
    t_clip: [:ref, :min, :max, :type],
    t_gather: [:ref, :indices, :axes],
    t_bitcast: [:ref, :type],
    t_fused: [:type, :shape, :row_axes, :per_row, :slots, :inputs],
    t_generated: [:shape, :reduce_axes, :views, :nodes, :outputs, :inputs],
    p_run: [:program, :inputs]
  ]

  # Heaps up to this many words get a full collection before a large new buffer; larger
  # ones a minor collection. A full collection took about 100 us at 75K words and 550 us
  # at 515K (2.2 ms at 1.4M), against about 150 us for a fresh 64 MiB buffer on the H200.
  @full_collection_words 131_072

  # The pool had no idle buffer for a new tensor ({:would_block_collect, size}): collect
  # this process first, so that the buffers of its dead tensors are back in the pool for
  # the retry to take. The BEAM frees a tensor only when the process that held it is
  # collected; until then a loop allocates afresh each time (on a dirty scheduler) and
  # memory grows. A small buffer gets a minor collection (the results of the last
  # iterations die young); a buffer of 16 MiB or more, worth more than a full collection
  # of a small heap, gets one.
  @doc false
  def collect_for_buffer(:small), do: :erlang.garbage_collect(self(), type: :minor)

  def collect_for_buffer(:large) do
    {:total_heap_size, words} = Process.info(self(), :total_heap_size)

    if words <= @full_collection_words do
      :erlang.garbage_collect()
    else
      :erlang.garbage_collect(self(), type: :minor)
    end
  end

  @doc """
  The name of the device in use (opening it on first use). Raises when no usable Vulkan
  device exists. (The seed package's contract, which eXMC's notebooks use.)
  """
  @spec device_name() :: String.t()
  def device_name, do: started!(dev_init())

  @doc "Whether the device runs f64 kernels (`shaderFloat64` and `shaderInt64`)."
  @spec has_f64() :: boolean()
  def has_f64 do
    info = started!(dev_info())
    info.f64 and info.int64
  end

  @doc false
  # The value of a device NIF's `{:ok, value}` (and the device line, once per VM);
  # raises the start-up error (no driver, no usable device) otherwise.
  def started!(result) do
    announce()

    case result do
      {:ok, value} -> value
      {:error, {kind, msg}} -> raise RuntimeError, "Nx.Vulkan could not start (#{kind}): #{msg}"
    end
  end

  @announced {__MODULE__, :announced}

  # Vulkan's names for device types, as the published notebook prints them.
  @device_kinds %{
    "discrete" => "DiscreteGpu",
    "integrated" => "IntegratedGpu",
    "virtual" => "VirtualGpu",
    "cpu" => "Cpu"
  }

  @doc false
  # Opens the device on first use and prints, once per VM, the line the intro notebook
  # shows: `[nx_vulkan_vulkano] device: NAME (DiscreteGpu)`. It goes to the caller's
  # standard error, which Livebook shows under the cell. A device that cannot open prints
  # nothing here: the op that needed it raises with the reason.
  def announce do
    if not :persistent_term.get(@announced, false) do
      with {:ok, true} <- dev_announce(), {:ok, info} <- dev_info() do
        IO.puts(:stderr, "[nx_vulkan_vulkano] device: #{info.name} (#{Map.get(@device_kinds, info.type, "Other")})")
      end

      :persistent_term.put(@announced, true)
    end

    :ok
  end

  for {name, args} <- twins do
    vars = Enum.map(args, &Macro.var(&1, __MODULE__))
    unused = Enum.map(args, &Macro.var(:"_#{&1}", __MODULE__))
    nb = :"#{name}_nb"
    dirty = :"#{name}_dirty"

    def unquote(nb)(unquote_splicing(unused)), do: err()
    def unquote(dirty)(unquote_splicing(unused)), do: err()

    def unquote(name)(unquote_splicing(vars)) do
      announce()

      case unquote(nb)(unquote_splicing(vars)) do
        :would_block ->
          unquote(dirty)(unquote_splicing(vars))

        {:would_block_collect, size} ->
          collect_for_buffer(size)

          case unquote(nb)(unquote_splicing(vars)) do
            :would_block -> unquote(dirty)(unquote_splicing(vars))
            {:would_block_collect, _} -> unquote(dirty)(unquote_splicing(vars))
            result -> result
          end

        result ->
          result
      end
    end
  end
end
