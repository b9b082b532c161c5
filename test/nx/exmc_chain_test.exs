defmodule Nx.Vulkan.ExmcChainTest do
  # eXMC's chain kernels (issue 40), with the lab's eXMC: for each family eXMC synthesises,
  # the rows that `NativeV.leapfrog_chain_synth_f64/6` returns for eXMC's own kernel equal
  # eXMC's host leapfrog (`Exmc.NUTS.Leapfrog.step/6`, on Nx.BinaryBackend) from the same
  # state, step by step; a posterior sampled through the chain kernel matches the posterior
  # integrated on the host; and eXMC's transform bug (its synthesis takes each
  # distribution's default transform where the model names another) is pinned.
  use ExUnit.Case, async: false

  @moduletag :exmc
  @moduletag timeout: 600_000

  alias Exmc.{Builder, Compiler}
  alias Exmc.Dist.{Beta, Cauchy, Custom, Exponential, Gamma, HalfNormal, Lognormal, Normal, StudentT, Weibull}
  alias Exmc.NUTS.{CustomSynth, Leapfrog}

  # Steps per chain call and the step size, as a NUTS tree's doubling would ask.
  @k 10
  @eps 0.1
  # The kernels cast exp, log and lgamma to f32 (eXMC's `exp_d(x) = double(exp(float(x)))`):
  # rows agree with the f64 host to about 5e-7 relative (measured over these models).
  @bound 2.0e-6

  @y [2.1, 2.5, 1.8, 2.3, 2.7]

  setup_all do
    {:ok, _} = Application.ensure_all_started(:exmc)
    :ok
  end

  setup do
    previous = Application.get_env(:exmc, :compiler)
    # The host side on plain Nx.BinaryBackend; synthesis does not depend on it.
    Application.put_env(:exmc, :compiler, :none)
    on_exit(fn -> Application.put_env(:exmc, :compiler, previous) end)

    if System.find_executable("glslangValidator") == nil do
      flunk("eXMC compiles its chain kernels with glslangValidator (Debian: glslang-tools)")
    end

    :ok
  end

  defp t(x), do: Nx.tensor(x, type: :f64)

  defp one(mod, params), do: Builder.new_ir() |> Builder.rv("x", mod, params)

  # The getting-started model of issue 40: mu ~ Normal(0, 10), sigma ~ HalfNormal(2)
  # (`opts` may name its transform), y ~ Normal(mu, sigma) observed.
  defp issue_model(opts) do
    Builder.new_ir()
    |> Builder.rv("mu", Normal, %{mu: t(0.0), sigma: t(10.0)})
    |> Builder.rv("sigma", HalfNormal, %{sigma: t(2.0)}, opts)
    |> Builder.rv("y", Normal, %{mu: "mu", sigma: "sigma"})
    |> Builder.obs("y_obs", "y", t(@y))
  end

  # A Gaussian likelihood written as a Custom distribution over the model's data; observed
  # with a dummy value, as eXMC's notebooks do (otherwise the host counts it as a latent).
  defp custom_model do
    loglik = fn _x, params ->
      d = Nx.subtract(params.__obs_data, params.mu)
      Nx.sum(Nx.multiply(-0.5, Nx.multiply(d, d)))
    end

    Builder.new_ir()
    |> Builder.data(t(@y))
    |> Builder.rv("mu", Normal, %{mu: t(0.0), sigma: t(10.0)})
    |> Custom.rv("lik", Custom.new(loglik, support: :real), %{mu: "mu", __obs_data: "__obs_data"})
    |> Builder.obs("lik_obs", "lik", t(0.0))
  end

  defp families do
    [
      {"normal", one(Normal, %{mu: t(0.5), sigma: t(1.3)})},
      {"half-normal", one(HalfNormal, %{sigma: t(2.0)})},
      {"exponential", one(Exponential, %{lambda: t(1.5)})},
      {"gamma", one(Gamma, %{alpha: t(2.0), beta: t(3.0)})},
      {"beta", one(Beta, %{alpha: t(2.0), beta: t(3.0)})},
      {"lognormal", one(Lognormal, %{mu: t(0.2), sigma: t(0.7)})},
      {"Student-t", one(StudentT, %{df: t(4.0), loc: t(0.3), scale: t(1.2)})},
      {"Cauchy", one(Cauchy, %{loc: t(0.3), scale: t(1.2)})},
      {"Weibull", one(Weibull, %{k: t(1.5), lambda: t(2.0)})},
      {"custom likelihood", custom_model()},
      {"normal likelihood, half-normal scale", issue_model([])}
    ]
  end

  defp f64(list), do: for(x <- list, into: <<>>, do: <<x * 1.0::float-64-little>>)
  defp floats(bin), do: for(<<x::float-64-little <- bin>>, do: x)

  # eXMC's kernel for `ir` run through the chain NIF for @k steps from a fixed state,
  # packed as eXMC's `Dispatch.chain` packs it: the variables, the state (q0, p0, inverse
  # mass) and rows of {q, p, grad, logp}.
  defp chain_rows(ir) do
    {:ok, {:synthesised, _sha, layout, push_spec, spv, obs_bin}} = CustomSynth.synthesise(ir)
    d = length(layout)
    {q0, p0, m} = {Enum.take([0.3, -0.4], d), Enum.take([0.7, 0.5], d), Enum.take([1.0, 0.8], d)}
    {:ok, push, _} = CustomSynth.Push.pack(%{push_spec | eps: @eps, K: @k})

    {:ok, {q, p, g, l}} = Nx.Vulkan.NativeV.leapfrog_chain_synth_f64(f64(q0), f64(p0), obs_bin <> f64(m), push, @k, spv)

    [q, p, g] = Enum.map([q, p, g], &Enum.chunk_every(floats(&1), d))
    {layout, {q0, p0, m}, Enum.zip([q, p, g, floats(l)])}
  end

  # eXMC's host leapfrog from the same state: rows of {q, p, grad, logp}.
  defp host_rows(ir, q0, p0, inv_mass) do
    {vag_fn, pm} = Compiler.value_and_grad(ir)
    q = t(q0)
    {_, g} = vag_fn.(q)

    {rows, _} =
      Enum.map_reduce(1..@k, {q, t(p0), g}, fn _, {q, p, g} ->
        {q1, p1, l1, g1} = Leapfrog.step(vag_fn, q, p, g, @eps, t(inv_mass))
        {{Nx.to_flat_list(q1), Nx.to_flat_list(p1), Nx.to_flat_list(g1), Nx.to_number(l1)}, {q1, p1, g1}}
      end)

    {Enum.map(pm.entries, & &1.id), rows}
  end

  # The largest |chain - host| / (1 + |host|) over every number of every row.
  defp worst(chain, host) do
    flat = fn rows -> Enum.flat_map(rows, fn {q, p, g, l} -> q ++ p ++ g ++ [l] end) end
    Enum.zip(flat.(chain), flat.(host)) |> Enum.map(fn {c, h} -> abs(c - h) / (1 + abs(h)) end) |> Enum.max()
  end

  test "every family's chain rows equal eXMC's host leapfrog, step by step" do
    for {name, ir} <- families() do
      {layout, {q0, p0, m}, chain} = chain_rows(ir)
      {ids, host} = host_rows(ir, q0, p0, m)
      assert ids == layout, "#{name}: the host's variables #{inspect(ids)}, the kernel's #{inspect(layout)}"
      assert length(chain) == @k
      err = worst(chain, host)
      assert err <= @bound, "#{name}: chain rows differ from eXMC's host leapfrog by #{err} (relative)"
    end
  end

  test "eXMC's transform bug, pinned: the chain of a model with sigma's transform: :log follows softplus" do
    # eXMC (e511720) synthesises each prior with its distribution's default transform
    # (HalfNormal: softplus; custom_synth.ex rv_mod_params drops the node's), while its host
    # and its decoding of the draws use the model's :log. The day eXMC is fixed this fails:
    # then the README's note on it goes.
    {_, {q0, p0, m}, chain} = chain_rows(issue_model(transform: :log))
    {_, host_log} = host_rows(issue_model(transform: :log), q0, p0, m)
    {_, host_softplus} = host_rows(issue_model([]), q0, p0, m)
    assert worst(chain, host_softplus) <= @bound
    assert worst(chain, host_log) > 0.1
  end

  # The posterior mean and sd of sigma in issue_model([]): mu integrated in closed form,
  # sigma by quadrature.
  defp integrated_sigma do
    n = length(@y)
    ybar = Enum.sum(@y) / n
    ss = Enum.sum(for y <- @y, do: (y - ybar) * (y - ybar))

    # For fixed sigma, mu integrates in closed form against its Normal(0, 10) prior:
    # log p(sigma | y) = log HalfNormal(sigma; 2) + log of the marginal likelihood.
    log_post = fn s ->
      v = s * s / n
      prior_mu = 100.0

      marginal =
        -(n - 1) * :math.log(s) - ss / (2 * s * s) - 0.5 * :math.log(v + prior_mu) - ybar * ybar / (2 * (v + prior_mu))

      marginal - s * s / 8.0
    end

    grid = for i <- 1..20_000, do: i * 0.0005
    w = Enum.map(grid, log_post)
    top = Enum.max(w)
    w = Enum.map(w, &:math.exp(&1 - top))
    z = Enum.sum(w)
    mean = Enum.sum(Enum.zip_with(grid, w, &(&1 * &2))) / z
    var = Enum.sum(Enum.zip_with(grid, w, &((&1 - mean) * (&1 - mean) * &2))) / z
    {mean, :math.sqrt(var)}
  end

  test "a posterior sampled through the chain kernel matches the integrated one" do
    Application.put_env(:exmc, :compiler, :vulkan)
    {want_mean, want_sd} = integrated_sigma()
    # Issue 40's figures, from the same integral.
    assert_in_delta want_mean, 0.525, 0.002
    assert_in_delta want_sd, 0.293, 0.002

    Exmc.NUTS.Vulkan.Dispatch.reset_dispatch_count()
    draws = 1500
    {trace, _stats} = Exmc.NUTS.Sampler.sample(issue_model([]), %{}, num_warmup: 500, num_samples: draws, seed: 7)
    assert Exmc.NUTS.Vulkan.Dispatch.dispatch_count() > 0, "the sampler never called the chain kernel"

    sigma = Nx.to_flat_list(trace["sigma"])
    mean = Enum.sum(sigma) / draws
    sd = :math.sqrt(Enum.sum(for s <- sigma, do: (s - mean) * (s - mean)) / (draws - 1))
    # Monte Carlo error with an effective sample size of at least a fifth of the draws; the
    # bug above gave 0.66-0.84 and sd 0.68-1.70.
    mc = want_sd / :math.sqrt(draws / 5)
    assert abs(mean - want_mean) <= 4 * mc, "sigma's mean #{mean}, integrated #{want_mean} (4 MC errors: #{4 * mc})"
    assert abs(sd - want_sd) <= 0.25 * want_sd, "sigma's sd #{sd}, integrated #{want_sd}"
  end
end
