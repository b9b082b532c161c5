defmodule Nx.Vulkan.Native.Path do
  @moduledoc false
  # Where a locally built NIF lives: $NX_VULKAN_NIF_PATH (without extension), else
  # priv/native/libnx_vulkan of the :nx_vulkan app, else of this source tree (plain
  # `elixir` runs without Mix).

  @doc false
  # `use RustlerPrecompiled, opts` where that package is installed; otherwise an
  # @on_load hook that loads the locally built library. (A macro, because `use` inside
  # a plain `if` would still be expanded without the package.)
  defmacro load_library(opts) do
    if Code.ensure_loaded?(RustlerPrecompiled) do
      quote do
        Nx.Vulkan.Native.Path.precompiled_target!(__MODULE__, unquote(opts))
        use RustlerPrecompiled, unquote(opts)
      end
    else
      quote do
        _precompiled_opts = unquote(opts)
        @on_load :load_nif
        @doc false
        def load_nif, do: :erlang.load_nif(String.to_charlist(Nx.Vulkan.Native.Path.library()), 0)
      end
    end
  end

  if Code.ensure_loaded?(RustlerPrecompiled) do
    @doc false
    # Before rustler_precompiled downloads: on a machine for which no precompiled NIF exists,
    # stops with the targets that exist and how to build from source instead (its own error
    # names neither the package's switch nor what a source build needs).
    def precompiled_target!(module, opts) do
      config = RustlerPrecompiled.Config.new(Keyword.put(opts, :module, module))

      forced =
        config.force_build? or System.get_env("RUSTLER_PRECOMPILED_FORCE_BUILD_ALL") in ["1", "true"] or
          Application.get_env(:rustler_precompiled, :force_build_all, false) or
          Keyword.get(Application.get_env(:rustler_precompiled, :force_build, []), opts[:otp_app], false)

      case forced || RustlerPrecompiled.build_metadata(config) do
        {:error, reason} ->
          raise CompileError,
            description: """
            no precompiled Nx.Vulkan NIF for this machine: #{reason}
            The NIF versions built: #{Enum.join(opts[:nif_versions], ", ")}.
            Build it from source instead: set NX_VULKAN_BUILD=true and add
            {:rustler, "~> 0.36", runtime: false} to your deps. A source build needs Rust
            (https://rustup.rs) and a C linker, no C++ and no Vulkan SDK (the kernels ship as
            SPIR-V); about 2 minutes on 2 cores.
            """

        _ ->
          :ok
      end
    end
  end

  def library do
    case System.get_env("NX_VULKAN_NIF_PATH") do
      nil -> Path.join(priv_dir(), "native/libnx_vulkan")
      path -> Path.rootname(path, ".so")
    end
  end

  defp priv_dir do
    case :code.priv_dir(:nx_vulkan) do
      {:error, _} -> Path.expand("../../priv", __DIR__)
      dir -> List.to_string(dir)
    end
  end
end
