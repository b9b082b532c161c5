defmodule Nx.Vulkan.ProfileTest do
  # NX_VULKAN_PROFILE is read once per VM, so each case runs in its own VM.
  use ExUnit.Case, async: false

  @root Path.expand("../..", __DIR__)

  defp run(script, env) do
    System.cmd("elixir", ["-r", Path.join(@root, "scripts/load_lib.exs"), "-e", script],
      env: env,
      stderr_to_stdout: true
    )
  end

  @work """
  a = Nx.iota({64, 64}, type: :f32, backend: Nx.Vulkan.Backend)
  b = Nx.add(a, 1.0)
  c = Nx.dot(b, a)
  Nx.to_number(Nx.sum(c))
  IO.inspect(Nx.Vulkan.profile(), label: "first", limit: :infinity)
  IO.inspect(Nx.Vulkan.profile(), label: "again")
  """

  test "with NX_VULKAN_PROFILE=1, profile/0 names the kernels that ran, with counts and times" do
    {out, 0} = run(@work, [{"NX_VULKAN_PROFILE", "1"}])
    [first] = Regex.run(~r/first: (\[.*?\])\n/s, out, capture: :all_but_first)
    {rows, _} = Code.eval_string(first)
    assert rows != []

    for {name, count, us} <- rows do
      assert is_binary(name) and name != ""
      assert is_integer(count) and count > 0
      assert is_float(us) and us >= 0.0
    end

    assert Enum.sum(Enum.map(rows, &elem(&1, 1))) >= 3
    assert Enum.any?(rows, fn {_, _, us} -> us > 0.0 end)
    # Largest first.
    times = Enum.map(rows, &elem(&1, 2))
    assert times == Enum.sort(times, :desc)
    # Reading clears the totals.
    assert out =~ "again: []"
  end

  test "without NX_VULKAN_PROFILE, profile/0 is empty" do
    {out, 0} = run(@work, [{"NX_VULKAN_PROFILE", nil}])
    assert out =~ "first: []"
  end
end
