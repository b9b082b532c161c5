defmodule Nx.Vulkan.ReadmeTest do
  # Every ```elixir block of README.md runs, each in a fresh process (its own default
  # backend and defn options), and a block ending in `#=> expected` gives that value.
  # `Mix.install` lines are left out: the package is already loaded here.
  use ExUnit.Case, async: false
  @moduletag Nx.Vulkan.TestSupport.nx_tags()

  @readme Path.expand("../../README.md", __DIR__)

  blocks = Regex.scan(~r/^```elixir\n(.*?)^```$/ms, File.read!(@readme)) |> Enum.map(fn [_, code] -> code end)

  test "the README has Elixir blocks to run" do
    assert length(unquote(blocks)) >= 2
  end

  for {block, i} <- Enum.with_index(blocks, 1) do
    first_line = block |> String.split("\n") |> Enum.find(&(&1 != "" and not String.starts_with?(&1, "Mix.install")))

    test "README block #{i} (#{first_line})" do
      block = unquote(block)
      code = block |> String.split("\n") |> Enum.reject(&String.starts_with?(&1, "Mix.install(")) |> Enum.join("\n")

      {code, expected} =
        case String.split(code, ~r/^#=> /m, parts: 2) do
          [code, expected] -> {code, expected}
          [code] -> {code, nil}
        end

      value = Task.async(fn -> code |> Code.eval_string() |> elem(0) end) |> Task.await(120_000)

      if expected do
        assert value == elem(Code.eval_string(expected), 0)
      end
    end
  end
end
