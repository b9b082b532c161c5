defmodule Nx.Vulkan.StartupErrorsTest do
  # What a user sees when a piece is missing: each case in its own VM (the device opens once
  # per VM), with the environment that simulates the missing piece.
  use ExUnit.Case, async: false

  @root Path.expand("../..", __DIR__)

  defp run(script, env) do
    System.cmd("elixir", ["-r", Path.join(@root, "scripts/load_lib.exs"), "-e", script],
      env: env,
      stderr_to_stdout: true
    )
  end

  @start """
  try do
    Nx.Vulkan.info()
    IO.puts("started")
  rescue
    e in RuntimeError -> IO.puts("raised: " <> Exception.message(e))
  end
  """

  test "Nx.Vulkan.info/0 names the loader, the device, its features and memory" do
    {out, 0} = run("IO.inspect(Nx.Vulkan.info(), limit: :infinity)", [])
    assert out =~ ~r/loader: "system \(libvulkan\.so\.1\)"/
    assert out =~ ~r/features: %\{.*f64: (true|false)/s
    assert out =~ "memory_heaps: [%{"
    assert out =~ "api_version:"
  end

  test "no Vulkan loader: the error names the package to install" do
    {out, 0} = run(@start, [{"NX_VULKAN_LOADER", "/nonexistent/libvulkan.so.1"}])
    assert out =~ "raised: Nx.Vulkan could not start (no_device)"
    assert out =~ "/nonexistent/libvulkan.so.1"
    assert out =~ "apt install libvulkan1"
    assert out =~ "vulkan-loader"
  end

  test "no device: the error names lavapipe as the way to run anyway" do
    # A loader with no driver manifest to load.
    env = [{"VK_ICD_FILENAMES", "/nonexistent/icd.json"}, {"VK_DRIVER_FILES", "/nonexistent/icd.json"}]
    {out, 0} = run(@start, env)
    assert out =~ "raised: Nx.Vulkan could not start (no_device)"
    assert out =~ "lavapipe"
    assert out =~ "mesa-vulkan-drivers"
  end

  test "a device without f64: info says so, and an f64 op names the feature and what still works" do
    script = """
    IO.inspect(Nx.Vulkan.info().features.f64, label: "f64")
    IO.inspect(Nx.Vulkan.info().disabled_features, label: "disabled")
    t = Nx.tensor([1.0, 2.0], type: :f32, backend: Nx.Vulkan.Backend)
    IO.inspect(Nx.to_list(Nx.add(t, 1.0)), label: "f32")
    try do
      Nx.Vulkan.with_fallback(:raise, fn -> Nx.add(Nx.as_type(t, :f64), 1.0) end)
    rescue
      e in ArgumentError -> IO.puts("raised: " <> Exception.message(e))
    end
    """

    {out, 0} = run(script, [{"NX_VULKAN_DISABLE_FEATURES", "shaderFloat64"}])
    assert out =~ "f64: false"
    assert out =~ ~s(disabled: ["shaderFloat64"])
    assert out =~ "f32: [2.0, 3.0]"
    assert out =~ "raised:"
    assert out =~ "shaderFloat64"
    assert out =~ "f32, f16, bf16 and integer tensors still run on it"
  end
end
