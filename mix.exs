defmodule Nx.Vulkan.MixProject do
  use Mix.Project

  @version "0.1.0-dev"
  @source_url "https://github.com/nx-vulkan/nx_vulkan"

  def project do
    [
      app: :nx_vulkan,
      version: @version,
      elixir: "~> 1.15",
      start_permanent: Mix.env() == :prod,
      deps: deps(),
      description: "Nx backend on Vulkan compute: every GPU without CUDA",
      package: package(),
      docs: [main: "readme", extras: ["README.md", "CHANGELOG.md"], source_url: @source_url],
      source_url: @source_url
    ]
  end

  def application do
    [extra_applications: [:logger]]
  end

  defp deps do
    [
      {:nx, "~> 0.13"},
      {:rustler_precompiled, "~> 0.8"},
      # Only needed to build the NIF from source (NX_VULKAN_BUILD=true or a -dev version).
      {:rustler, "~> 0.36", optional: not String.ends_with?(@version, "-dev")},
      {:axon, "~> 0.8", only: :test},
      {:ex_doc, "~> 0.34", only: :dev, runtime: false}
    ]
  end

  defp package do
    [
      # native/nx_vulkan/build is the build script; shaders/ holds the GLSL and, in
      # shaders/spirv, the SPIR-V a source build embeds (no shaderc needed).
      files: ~w(lib native/nx_vulkan/src native/nx_vulkan/build native/nx_vulkan/Cargo.toml
                Cargo.toml Cargo.lock .cargo shaders mix.exs README.md CHANGELOG.md LICENSE
                checksum-*.exs),
      licenses: ["Apache-2.0"],
      links: %{"GitHub" => @source_url}
    ]
  end
end
