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
