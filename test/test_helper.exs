# `mix test` (where Hex works). The offline runner, test/run_offline.exs, does the same
# without Mix.
Code.require_file("support/case_helpers.exs", __DIR__)
Code.require_file("support/nx_helpers.exs", __DIR__)
Code.require_file("support/sweep.exs", __DIR__)
ExUnit.start(exclude: if(Code.ensure_loaded?(Axon), do: [], else: [:axon]))
