defmodule Nx.Vulkan.Table do
  @moduledoc false
  # Named public ETS tables that outlive the process that first needs them: each is owned
  # by a process that never exits (the package starts no application supervisor).

  @doc "Creates the named public table `name` with `opts` unless it exists; returns `name`."
  def ensure(name, opts) do
    if :ets.whereis(name) == :undefined do
      parent = self()
      ref = make_ref()

      spawn(fn ->
        created =
          try do
            :ets.new(name, [:named_table, :public | opts])
          rescue
            # Another process created it first.
            ArgumentError -> nil
          end

        send(parent, {ref, :ready})
        if created, do: Process.sleep(:infinity)
      end)

      receive do
        {^ref, :ready} -> :ok
      after
        5000 -> :ok
      end
    end

    name
  end
end
