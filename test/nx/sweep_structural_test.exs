defmodule Nx.Vulkan.SweepStructuralTest do
  # The differential sweep's second slice (issue 33, item 2): reductions, arg-reductions,
  # cumulative ops, sort, argsort, top_k, windows, dot, clip, select and indexing, on
  # random types and shapes (scalars, one element, odd sizes, transposed operands), with
  # each type's edge values (unsigned integers at or above 2^31 and 2^63 among them), on
  # Nx.Vulkan.Backend and Nx.BinaryBackend. Integer results and every ordering op compare
  # bit for bit (NaN payloads aside); float sums, products and dots compare within the
  # rounding bound of their accumulation order (`bound/3`). Seeds and deadlines as in
  # sweep_test.exs (`NX_VULKAN_SWEEP_SEED`, `NX_VULKAN_SWEEP_SECONDS`).
  use ExUnit.Case, async: false
  import Nx.Vulkan.Sweep

  @moduletag :sweep
  @moduletag timeout: 900_000

  setup do: Nx.Vulkan.NxHelpers.raise_on_fallback()

  @types Nx.Vulkan.Sweep.types()
  # (Nx 0.13 has no empty axes: every dimension is positive.)
  @shapes [{}, {1}, {7}, {3, 5}, {4, 1}, {2, 3, 4}, {1, 9}]

  # Float accumulations: compared within a bound, on values without the type's extremes
  # (the host accumulates in f64, kernels in the type or f32: an overflow of a partial sum
  # is the accumulation's choice, not a wrong result).
  @accumulating [:sum, :product, :cumulative_sum, :cumulative_product, :window_sum, :window_product, :dot]
  @multiplying [:product, :cumulative_product, :window_product]

  defp case_for(rng) do
    {family, rng} =
      pick([:reduce, :reduce, :arg, :cumulative, :sort, :argsort, :top_k, :window, :dot, :clip, :select, :take], rng)

    {t, rng} = pick(@types, rng)
    {shape, rng} = pick(@shapes, rng)
    {transposed?, rng} = pick([false, false, true], rng)
    transposed? = transposed? and tuple_size(shape) >= 2 and family != :dot
    view = if transposed?, do: &Nx.transpose/1, else: & &1
    {{op, opts, inputs, fun}, rng} = build(family, t, shape, view, rng)
    # (The options are shown with a failure; a transposed operand is read in place.)
    {{op, if(transposed?, do: opts ++ [operand: :transposed], else: opts), inputs, fun}, rng}
  end

  defp build(:reduce, t, shape, view, rng) do
    {op, rng} = pick([:sum, :product, :reduce_max, :reduce_min, :all, :any], rng)
    {a, rng} = values(op, t, shape, rng)
    {axes, rng} = axes(shape, rng)
    {keep, rng} = pick([false, true], rng)
    opts = [axes: axes, keep_axes: keep]
    {{op, opts, [a], fn [a] -> apply(Nx, op, [view.(a), opts]) end}, rng}
  end

  defp build(:arg, t, shape, view, rng) do
    {op, rng} = pick([:argmax, :argmin], rng)
    {a, rng} = tensor(t, shape, rng)
    {axis, rng} = one_axis(shape, rng)
    {tie, rng} = pick([:low, :high], rng)
    {keep, rng} = pick([false, true], rng)
    opts = if axis, do: [axis: axis, tie_break: tie, keep_axis: keep], else: [tie_break: tie]
    {{op, opts, [a], fn [a] -> apply(Nx, op, [view.(a), opts]) end}, rng}
  end

  defp build(:cumulative, t, shape, view, rng) do
    {op, rng} = pick([:cumulative_sum, :cumulative_product, :cumulative_max, :cumulative_min], rng)
    {a, rng} = values(op, t, shape, rng)
    {axis, rng} = one_axis(shape, rng)
    {reverse, rng} = pick([false, true], rng)
    opts = [axis: axis || 0, reverse: reverse]

    if shape == {},
      do: build(:cumulative, t, {7}, view, rng),
      else: {{op, opts, [a], fn [a] -> apply(Nx, op, [view.(a), opts]) end}, rng}
  end

  defp build(:sort, t, shape, view, rng) do
    {a, rng} = tensor(t, shape, rng)
    {axis, rng} = one_axis(shape, rng)
    {direction, rng} = pick([:asc, :desc], rng)
    opts = [axis: axis || 0, direction: direction]

    if shape == {},
      do: build(:sort, t, {7}, view, rng),
      else: {{:sort, opts, [a], fn [a] -> Nx.sort(view.(a), opts) end}, rng}
  end

  defp build(:argsort, t, shape, view, rng) do
    {a, rng} = tensor(t, shape, rng)
    {axis, rng} = one_axis(shape, rng)
    {direction, rng} = pick([:asc, :desc], rng)
    # Stable, so that ties have one answer.
    opts = [axis: axis || 0, direction: direction, stable: true]

    if shape == {},
      do: build(:argsort, t, {7}, view, rng),
      else: {{:argsort, opts, [a], fn [a] -> Nx.argsort(view.(a), opts) end}, rng}
  end

  defp build(:top_k, t, shape, view, rng) do
    shape = if shape == {} or elem(shape, tuple_size(shape) - 1) == 0, do: {2, 6}, else: shape
    {a, rng} = tensor(t, shape, rng)
    last = elem(view.(Nx.iota(shape)).shape, tuple_size(shape) - 1)
    {k, rng} = pick(Enum.to_list(1..last), rng)
    # The values only: indices of equal values are the sort's choice (argsort compares them).
    {{:top_k, [k: k], [a], fn [a] -> elem(Nx.top_k(view.(a), k: k), 0) end}, rng}
  end

  defp build(:window, t, shape, view, rng) do
    {op, rng} = pick([:window_sum, :window_product, :window_max, :window_min], rng)
    shape = if shape == {}, do: {7}, else: shape
    {a, rng} = values(op, t, shape, rng)
    dims = Tuple.to_list(view.(Nx.iota(shape)).shape)
    {window, rng} = Enum.map_reduce(dims, rng, fn d, rng -> pick(Enum.to_list(1..max(min(d, 3), 1)), rng) end)
    {strides, rng} = Enum.map_reduce(dims, rng, fn _, rng -> pick([1, 1, 2], rng) end)
    {padding, rng} = pick([:valid, :same], rng)
    opts = [strides: strides, padding: padding]

    if Enum.any?(dims, &(&1 == 0)),
      do: build(:window, t, {3, 5}, view, rng),
      else:
        {{op, [window: window] ++ opts, [a], fn [a] -> apply(Nx, op, [view.(a), List.to_tuple(window), opts]) end}, rng}
  end

  defp build(:dot, t, _shape, _view, rng) do
    {t2, rng} = pick([t, t | @types], rng)
    {[m, k, n], rng} = Enum.map_reduce(1..3, rng, fn _, rng -> pick([1, 2, 3, 5], rng) end)
    {form, rng} = pick([:matrix, :vector, :transposed], rng)
    {a, rng} = values(:dot, t, if(form == :transposed, do: {k, m}, else: {m, k}), rng)
    {b, rng} = values(:dot, t2, if(form == :vector, do: {k}, else: {k, n}), rng)

    fun =
      case form do
        :transposed -> fn [a, b] -> Nx.dot(a, [0], b, [0]) end
        _ -> fn [a, b] -> Nx.dot(a, b) end
      end

    {{:dot, [form: form], [a, b], fun}, rng}
  end

  defp build(:clip, t, shape, view, rng) do
    {a, rng} = tensor(t, shape, rng)
    {lt, rng} = pick([t, t | @types], rng)
    {lo, rng} = tensor(lt, {}, rng)
    {hi, rng} = tensor(lt, {}, rng)
    # Nx requires lo <= hi only where it can see the values; keep them ordered.
    {lo, hi} = if Nx.to_number(Nx.greater(lo, hi)) == 1, do: {hi, lo}, else: {lo, hi}
    {{:clip, [], [a, lo, hi], fn [a, lo, hi] -> Nx.clip(view.(a), lo, hi) end}, rng}
  end

  defp build(:select, t, shape, view, rng) do
    {pt, rng} = pick([{:u, 8}, {:u, 8}, {:s, 32}, {:u, 32}, {:f, 32}], rng)
    {pred, rng} = tensor(pt, shape, rng)
    {t2, rng} = pick([t, t | @types], rng)
    {a, rng} = tensor(t, shape, rng)
    {b, rng} = tensor(t2, shape, rng)
    {{:select, [], [pred, a, b], fn [p, a, b] -> Nx.select(view.(p), view.(a), view.(b)) end}, rng}
  end

  defp build(:take, t, shape, view, rng) do
    shape = if shape == {} or Enum.any?(Tuple.to_list(shape), &(&1 == 0)), do: {3, 5}, else: shape
    {a, rng} = tensor(t, shape, rng)
    {axis, rng} = one_axis(shape, rng)
    len = elem(view.(Nx.iota(shape)).shape, axis)
    {it, rng} = pick([{:s, 32}, {:s, 64}, {:u, 32}, {:u, 8}], rng)
    {picks, rng} = Enum.map_reduce(1..4, rng, fn _, rng -> pick(Enum.to_list(0..(len - 1)), rng) end)
    idx = Nx.tensor(picks, type: it)
    {{:take, [axis: axis], [a, idx], fn [a, i] -> Nx.take(view.(a), i, axis: axis) end}, rng}
  end

  # Values for `op`: accumulating float ops leave out the type's extremes.
  defp values(op, t, shape, rng) do
    cond do
      not (op in @accumulating and float?(t)) -> tensor(t, shape, rng)
      op in @multiplying -> tensor_of(t, shape, rng, &tame(&1, &2, true))
      true -> tensor_of(t, shape, rng, &tame(&1, &2, false))
    end
  end

  # Products also leave out subnormals: two of them underflow to 0 in one order of
  # multiplication and not in another, and 0 times an infinity is NaN (seed 83666652's
  # product with -inf and two subnormals: NaN here, inf on the host's left fold).
  defp tame(t, rng, no_subnormals?) do
    {v, rng} = value(t, rng)
    big = Nx.Constants.max_finite(t) |> Nx.to_number()
    normal = Nx.Constants.smallest_positive_normal(t) |> Nx.to_number()

    cond do
      is_float(v) and abs(v) > big / 1024 -> {1.5, rng}
      no_subnormals? and is_float(v) and v != 0 and abs(v) < normal -> {1.5, rng}
      true -> {v, rng}
    end
  end

  defp axes({}, rng), do: {nil, rng}

  defp axes(shape, rng) do
    {mask, rng} = Enum.map_reduce(Tuple.to_list(shape), rng, fn _, rng -> pick([true, false], rng) end)
    axes = for {true, i} <- Enum.with_index(mask), do: i
    {all?, rng} = pick([true, false, false], rng)
    {if(all? or axes == [], do: nil, else: axes), rng}
  end

  defp one_axis({}, rng), do: {nil, rng}
  defp one_axis(shape, rng), do: pick(Enum.to_list(0..(tuple_size(shape) - 1)), rng)

  defp check({op, _opts, inputs, fun} = c) do
    if System.get_env("NX_VULKAN_SWEEP_VERBOSE") in ["1", "true"], do: IO.puts(describe({c, "", nil, nil}))

    with {:ok, want} <- on_host(fn -> fun.(inputs) end) do
      got = fun.(Enum.map(inputs, &Nx.backend_transfer(&1, Nx.Vulkan.Backend)))
      got = Nx.backend_transfer(got, Nx.BinaryBackend)

      cond do
        got.type != want.type or got.shape != want.shape ->
          {:fail, "type/shape #{inspect({got.type, got.shape})}, host #{inspect({want.type, want.shape})}", got, want}

        Nx.to_binary(got) == Nx.to_binary(want) ->
          :ok

        same_but_nan_payloads?(got, want) ->
          :ok

        op in @accumulating and float?(want.type) ->
          within_bound(c, got, want)

        true ->
          {:fail, "bits differ", got, want}
      end
    end
  end

  # |got - want| within n eps (the same op on |inputs|) for sums and dots, n eps |want| for
  # products, with n the number of terms per output; NaNs and infinities in the same places.
  defp within_bound({op, _opts, inputs, fun}, got, want) do
    Nx.with_default_backend(Nx.BinaryBackend, fn ->
      eps = Nx.Constants.epsilon(want.type) |> Nx.to_number()
      terms = max(Enum.reduce(inputs, 1, &max(Nx.size(&1), &2)), 2)
      [g, w] = Enum.map([got, want], &Nx.as_type(&1, :f64))

      scale =
        if op in @multiplying,
          do: Nx.abs(w),
          else: fun.(Enum.map(inputs, &Nx.abs/1)) |> Nx.as_type(:f64)

      # (As f64 tensors: a bare number is an f32 constant, where the smallest f64 normal
      # is 0.)
      tiny = Nx.Constants.smallest_positive_normal(want.type) |> Nx.as_type(:f64)
      limit = Nx.add(Nx.multiply(scale, Nx.tensor(2 * terms * eps, type: :f64)), tiny)
      finite = Nx.logical_not(Nx.logical_or(Nx.is_nan(w), Nx.is_infinity(w)))
      close = Nx.less_equal(Nx.abs(Nx.subtract(g, w)), limit)
      same_special = Nx.logical_or(Nx.equal(g, w), Nx.logical_and(Nx.is_nan(g), Nx.is_nan(w)))
      ok = Nx.select(finite, close, same_special)

      if Nx.to_number(Nx.all(ok)) == 1,
        do: :ok,
        else: {:fail, "beyond the accumulation bound", got, want}
    end)
  end

  defp describe({{op, opts, inputs, _}, why, got, want}) do
    show = &inspect(&1, limit: 24, charlists: :as_lists)
    types = Enum.map_join(inputs, ", ", &"#{Nx.Type.to_string(&1.type)}#{inspect(&1.shape)}")
    head = "  #{op}(#{types}, #{inspect(opts)})#{if why != "", do: ": #{why}"}"

    if got do
      [head | Enum.map(inputs, &("    in:   " <> show.(Nx.to_flat_list(&1))))]
      |> Kernel.++(["    got:  " <> show.(Nx.to_flat_list(got)), "    host: " <> show.(Nx.to_flat_list(want))])
      |> Enum.join("\n")
    else
      head
    end
  end

  test "random reductions, ordering, window, dot and indexing cases agree with Nx.BinaryBackend" do
    {seed, failures} = run("structural sweep", &case_for/1, &check/1, &describe/1)

    assert failures == [],
           "seed #{seed}: #{length(failures)} cases differ (first printed above; NX_VULKAN_SWEEP_SEED=#{seed} replays)"
  end
end
