defmodule Nx.Vulkan.PrecompiledDownloadTest do
  # The download path of a Hex install, through rustler_precompiled's own code: a Mix project
  # holding this package's NIF modules (lib/nx_vulkan/native*.ex, version 0.1.0, so no
  # source build) compiles in a child OS process, with NX_VULKAN_BASE_URL pointing at
  # archives that this test serves on 127.0.0.1. Needs rustler_precompiled and castore
  # (the lab's ebin-build, or any ERL_LIBS folder with them) and `mix`; skipped otherwise.
  use ExUnit.Case, async: false

  @root Path.expand("../..", __DIR__)
  @nif Path.join(@root, "priv/native/libnx_vulkan.so")

  # The folders (ERL_LIBS entries) that hold rustler_precompiled and castore.
  libs =
    [System.get_env("NX_LAB_BUILD_LIBS") | String.split(System.get_env("ERL_LIBS", ""), ":")]
    |> Enum.reject(&(&1 in [nil, ""]))
    |> Enum.filter(&(File.dir?(Path.join(&1, "rustler_precompiled")) and File.dir?(Path.join(&1, "castore"))))

  @build_libs List.first(libs)
  @mix System.find_executable("mix")

  cond do
    @build_libs == nil ->
      @moduletag skip: "rustler_precompiled is not installed (no Hex here; the lab's ebin-build has it)"

    @mix == nil ->
      @moduletag skip: "no mix executable"

    not File.exists?(@nif) ->
      @moduletag skip: "no built NIF at priv/native (scripts/build_nif)"

    true ->
      :ok
  end

  @moduletag timeout: 600_000

  setup_all do
    Code.append_path(Path.join([@build_libs, "rustler_precompiled", "ebin"]))
    {:ok, _} = Application.ensure_all_started(:inets)
    www = tmp("www")

    {:ok, httpd} =
      :inets.start(:httpd,
        port: 0,
        server_name: ~c"localhost",
        server_root: String.to_charlist(tmp("httpd")),
        document_root: String.to_charlist(www),
        bind_address: {127, 0, 0, 1}
      )

    port = :httpd.info(httpd)[:port]
    on_exit(fn -> :inets.stop(:httpd, httpd) end)
    %{www: www, base_url: "http://127.0.0.1:#{port}/nx_vulkan/v0.1.0"}
  end

  test "a good checksum: the archive is downloaded, checked, loaded, and runs an op", ctx do
    {archive, sha} = serve!(ctx.www)
    # The checksum file as the release workflow writes it.
    {file, 0} = System.cmd(Path.join(@root, "scripts/write_checksums"), [Path.join(ctx.www, "nx_vulkan/v0.1.0")])
    assert {%{^archive => "sha256:" <> ^sha}, _} = Code.eval_string(file)
    {out, status} = compile_project(ctx.base_url, file, [])
    assert status == 0, out

    {out, status} = run_op(ctx.base_url)
    assert status == 0, out
    assert out =~ "sum: [2.0, 4.0]"
    assert out =~ "[nx_vulkan_vulkano] device:"
  end

  test "a wrong checksum is refused and nothing is loaded", ctx do
    {archive, sha} = serve!(ctx.www)
    wrong = String.duplicate("0", String.length(sha))
    {out, status} = compile_project(ctx.base_url, %{archive => wrong}, [])
    assert status != 0
    assert out =~ "the integrity check failed because the checksum of files does not match"
    project = Process.get(:project)
    assert Path.wildcard(Path.join(project, "_build/**/priv/native/*.so")) == []
  end

  test "a machine with no precompiled NIF is told the targets and how to build from source", ctx do
    {archive, sha} = serve!(ctx.www)
    # rustler_precompiled reads the target from these (for Nerves), here a riscv64 Linux.
    env = [{"TARGET_ARCH", "riscv64"}, {"TARGET_OS", "linux"}, {"TARGET_ABI", "gnu"}]
    {out, status} = compile_project(ctx.base_url, %{archive => sha}, env)
    assert status != 0
    assert out =~ "no precompiled Nx.Vulkan NIF for this machine"
    assert out =~ "riscv64gc-unknown-linux-gnu"
    assert out =~ "x86_64-unknown-linux-musl"
    assert out =~ "NX_VULKAN_BUILD=true"
  end

  # The archive rustler_precompiled will ask for on this machine (its own naming), made of
  # the NIF built here, under the served folder; returns its name and SHA-256.
  defp serve!(www) do
    # (apply: rustler_precompiled joins the code path only in setup_all)
    config =
      apply(RustlerPrecompiled.Config, :new, [
        [
          otp_app: :nx_vulkan,
          module: Nx.Vulkan.Native,
          crate: "nx_vulkan",
          base_url: "http://127.0.0.1/",
          version: "0.1.0",
          force_build: false,
          nif_versions: ["2.15", "2.16", "2.17"],
          targets: ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]
        ]
      ])

    {:ok, meta} = apply(RustlerPrecompiled, :build_metadata, [config])
    # meta.file_name is the archive's name; the library inside is lib_name plus ".so".
    archive = meta.file_name
    inner = meta.lib_name <> ".so"
    staging = tmp("staging")
    File.cp!(@nif, Path.join(staging, inner))
    dest = Path.join([www, "nx_vulkan", "v0.1.0", archive])
    File.mkdir_p!(Path.dirname(dest))

    :ok =
      :erl_tar.create(
        String.to_charlist(dest),
        [{String.to_charlist(inner), String.to_charlist(Path.join(staging, inner))}],
        [:compressed]
      )

    sha = :crypto.hash(:sha256, File.read!(dest)) |> Base.encode16(case: :lower)
    {archive, sha}
  end

  # A Mix project named :nx_vulkan at 0.1.0 with the package's NIF modules and the given
  # checksum file; `mix compile` in a child process (its own rustler_precompiled cache).
  defp compile_project(base_url, checksums, env) when is_map(checksums) do
    entries = Enum.map_join(checksums, ",\n", fn {name, sha} -> ~s(  "#{name}" => "sha256:#{sha}") end)
    compile_project(base_url, "%{\n#{entries}\n}\n", env)
  end

  defp compile_project(base_url, checksum_file, env) do
    project = tmp("project")
    Process.put(:project, project)
    File.mkdir_p!(Path.join(project, "lib/nx_vulkan"))

    for f <- ~w(native_path.ex native.ex),
        do: File.cp!(Path.join(@root, "lib/nx_vulkan/#{f}"), Path.join(project, "lib/nx_vulkan/#{f}"))

    File.write!(Path.join(project, "mix.exs"), """
    defmodule NxVulkanDownloadProbe.MixProject do
      use Mix.Project
      # No deps: Nx and rustler_precompiled come from ERL_LIBS, which Mix would prune.
      def project, do: [app: :nx_vulkan, version: "0.1.0", deps: [], prune_code_paths: false]
      def application, do: [extra_applications: [:logger, :inets, :ssl]]
    end
    """)

    File.write!(Path.join(project, "checksum-Elixir.Nx.Vulkan.Native.exs"), checksum_file)
    mix(project, ["compile", "--no-deps-check"], base_url, env)
  end

  defp run_op(base_url) do
    script = """
    alias Nx.Vulkan.Native
    {:ok, a} = Native.t_from_binary(<<1.0::float-32-native, 2.0::float-32-native>>, [2], "f32")
    {:ok, b} = Native.t_binary("add", a, a, [2], "f32")
    {:ok, bin} = Native.t_to_binary(b, nil)
    Native.announce()
    IO.puts("sum: " <> inspect(for <<x::float-32-native <- bin>>, do: x))
    """

    mix(Process.get(:project), ["run", "--no-deps-check", "--no-compile", "-e", script], base_url, [])
  end

  defp mix(project, args, base_url, env) do
    erl_libs = Enum.join(Enum.reject([System.get_env("ERL_LIBS"), @build_libs], &(&1 in [nil, ""])), ":")

    env =
      [
        {"ERL_LIBS", erl_libs},
        {"MIX_ENV", "prod"},
        {"NX_VULKAN_BASE_URL", base_url},
        {"NX_VULKAN_BUILD", nil},
        {"RUSTLER_PRECOMPILED_GLOBAL_CACHE_PATH", Path.join(project, "rp_cache")},
        {"HTTP_PROXY", nil},
        {"http_proxy", nil},
        {"HTTPS_PROXY", nil},
        {"https_proxy", nil}
      ] ++ env

    System.cmd(@mix, args, cd: project, env: env, stderr_to_stdout: true)
  end

  # A fresh folder, removed after the test: unique integers restart in every VM, so a
  # name from them alone met an earlier run's folder (and its built NIF).
  defp tmp(name) do
    dir = Path.join(System.tmp_dir!(), "nxv-download-#{name}-#{System.pid()}-#{System.unique_integer([:positive])}")
    File.rm_rf!(dir)
    File.mkdir_p!(dir)
    ExUnit.Callbacks.on_exit(fn -> File.rm_rf!(dir) end)
    dir
  end
end
