defmodule Nx.Vulkan.PipelineCache do
  @moduledoc """
  The driver's pipeline cache, persisted on disk so that a new VM skips the driver's
  compilation of the kernels an earlier one built (7-125 ms each on lavapipe).

      Nx.Vulkan.PipelineCache.load()      # at start (Nx.Vulkan.Node does it)
      # ... work that builds pipelines ...
      Nx.Vulkan.PipelineCache.persist()   # before exit (Nx.Vulkan.Node does it)

  One file per device and driver: `default_path/0` is
  `<dir>/pipelines-<device UUID>-<driver version>.bin`, where `<dir>` is
  `config :nx_vulkan, pipeline_cache_dir: dir`, else `$NX_VULKAN_CACHE_DIR`, else the
  user cache directory (`~/.cache/nx_vulkan` on Linux). The file carries a checksum and
  the driver's own header (vendor, device, pipeline-cache UUID): a damaged file, or one
  written by another device or driver, is ignored with a warning and never reaches the
  driver. Writes go to a temporary file renamed into place, so readers never see half a
  file.
  """

  require Logger
  alias Nx.Vulkan.Native

  @doc "The device's UUID as 32 hex digits (empty where the driver reports none)."
  @spec device_uuid_hex() :: String.t()
  def device_uuid_hex, do: info().device_uuid

  @doc "Where the cache of this device and driver lives."
  @spec default_path() :: Path.t()
  def default_path do
    %{device_uuid: uuid, driver_version: version} = info()
    uuid = if uuid == "", do: "unknown", else: uuid
    Path.join(dir(), "pipelines-#{uuid}-#{version}.bin")
  end

  @doc """
  Merges the cache at `path` into this VM's. `:ok` when loaded; `{:error, :enoent}` when
  there is no file; `{:error, reason}` (with a logged warning) for a file that is
  unreadable, damaged or another device's, which is then ignored.
  """
  @spec load(Path.t()) :: :ok | {:error, term()}
  def load(path \\ default_path()) do
    with {:ok, bytes} <- File.read(path),
         {:ok, _driver_bytes} <- Native.dev_load_pipeline_cache(bytes) do
      :ok
    else
      {:error, :enoent} ->
        {:error, :enoent}

      {:error, {_kind, msg}} ->
        Logger.warning("Nx.Vulkan.PipelineCache: ignoring #{path}: #{msg}")
        {:error, msg}

      {:error, reason} ->
        Logger.warning("Nx.Vulkan.PipelineCache: ignoring #{path}: #{inspect(reason)}")
        {:error, reason}
    end
  end

  @doc "Writes this VM's pipeline cache to `path` (creating its directory): `:ok` or `{:error, reason}`."
  @spec persist(Path.t()) :: :ok | {:error, term()}
  def persist(path \\ default_path()) do
    with {:ok, bytes} <- Native.dev_pipeline_cache(),
         :ok <- File.mkdir_p(Path.dirname(path)),
         tmp = "#{path}.#{System.pid()}.#{System.unique_integer([:positive])}.tmp",
         :ok <- write_then_rename(tmp, bytes, path) do
      :ok
    else
      {:error, {_kind, msg}} -> {:error, msg}
      {:error, reason} -> {:error, reason}
    end
  end

  @doc "Deletes the cache file at `path` (`:ok` also when there is none)."
  @spec clear(Path.t()) :: :ok
  def clear(path \\ default_path()) do
    _ = File.rm(path)
    :ok
  end

  # Another VM may be saving the same file: each writes its own temporary one, and the
  # last rename wins with a whole file.
  defp write_then_rename(tmp, bytes, path) do
    result = with :ok <- File.write(tmp, bytes), do: File.rename(tmp, path)
    if result != :ok, do: File.rm(tmp)
    result
  end

  defp dir do
    Application.get_env(:nx_vulkan, :pipeline_cache_dir) || System.get_env("NX_VULKAN_CACHE_DIR") ||
      :filename.basedir(:user_cache, ~c"nx_vulkan") |> List.to_string()
  end

  defp info, do: Native.started!(Native.dev_info())
end
