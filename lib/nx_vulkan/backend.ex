defmodule Nx.Vulkan.Backend do
  @moduledoc """
  The `Nx.Backend` that keeps tensors in Vulkan device memory and runs ops as compute
  kernels.

      Nx.default_backend(Nx.Vulkan.Backend)
      t = Nx.tensor([1.0, 2.0, 3.0])            # on the GPU
      Nx.backend_transfer(t, Nx.BinaryBackend)  # back to the host

  Every callback maps onto one native call; Nx semantics (output shapes, types,
  broadcasting, axes) live in the Rust engine, which is tested on its own. Callbacks
  without a Vulkan kernel yet go through `Nx.Vulkan.Backend.Fallback`, which runs them on
  `Nx.BinaryBackend`, counts them and, when asked, raises instead (`Nx.Vulkan.set_fallback/1`).

  Tensors from other backends passed to an op are uploaded first. GPU work is recorded
  and submitted asynchronously; only reading data (`Nx.to_binary/1`, `inspect`,
  transfers) waits for it.
  """

  @behaviour Nx.Backend

  # Tensors of both names, `Nx.Vulkan.Backend` and the published `Nx.Vulkan.VulkanoBackend`,
  # carry one struct, so that they mix in one op with no copy (Nx refuses an op over two
  # different backend structs).
  alias Nx.Vulkan.VulkanoBackend, as: Handle
  @names [__MODULE__, Nx.Vulkan.VulkanoBackend]

  import Kernel, except: [inspect: 2]

  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Native
  alias Nx.Vulkan.Backend.Fallback
  alias Nx.Vulkan.Backend.ReduceFun
  alias Nx.Vulkan.Backend.Checks
  alias Nx.Vulkan.Backend.Blocks

  @not_one_op "the function is not one add/multiply/max/min/logical_and/logical_or of its arguments"

  ## Helpers (Nx.Vulkan.Backend.Call: one native call per op, its errors and fallback)

  import Nx.Vulkan.Backend.Call, except: [type_name: 1]

  @doc false
  defdelegate type_name(type), to: Nx.Vulkan.Backend.Call

  ## Backend lifecycle and data movement

  @impl true
  def init(opts) do
    if opts != [], do: raise(ArgumentError, "Nx.Vulkan.Backend takes no options, got: #{Kernel.inspect(opts)}")
    opts
  end

  # A complex number goes to the NIF as {re, im} (each a number or :nan/:infinity/...).
  @impl true
  def constant(out, number, _opts) do
    value = with %Complex{re: re, im: im} <- number, do: {re, im}

    run(:constant, [out, number, []], out, fn ->
      Native.t_constant(shape_list(out), type_name(out.type), value)
    end)
  end

  @impl true
  def from_binary(out, binary, _opts) do
    run(:from_binary, [out, binary, []], out, fn ->
      upload(binary, shape_list(out), type_name(out.type))
    end)
  end

  @impl true
  def to_binary(%T{data: %Handle{ref: ref}, type: {_, bits}} = t, limit) do
    case Native.t_to_binary(ref, div(limit * bits + 7, 8)) do
      # Sub-byte types: the packed bytes' padding bits are not part of Nx's bitstring.
      {:ok, bin} when bits < 8 ->
        <<data::bitstring-size(limit * bits), _pad::bitstring>> = bin
        data

      {:ok, bin} ->
        bin

      {:error, {kind, msg}} ->
        raise error_module(kind), "Nx.Vulkan.Backend.to_binary(#{describe([t])}): #{msg}"
    end
  end

  @impl true
  def inspect(%T{} = tensor, inspect_opts) do
    limit = if inspect_opts.limit == :infinity, do: Nx.size(tensor), else: inspect_opts.limit + 1
    Nx.Backend.inspect(tensor, to_binary(tensor, min(limit, Nx.size(tensor))), inspect_opts)
  end

  @impl true
  def backend_copy(%T{data: %Handle{ref: ref}} = t, backend, _opts) when backend in @names do
    # Tensors are immutable: a new handle on the same device memory is a full copy.
    run(:backend_copy, [t, t], t, fn -> Native.t_reshape(ref, shape_list(t)) end)
  end

  def backend_copy(%T{} = t, Nx.Tensor, opts), do: backend_copy(t, Nx.BinaryBackend, opts)

  def backend_copy(%T{} = t, backend, opts) do
    backend.from_binary(t, to_binary(t, Nx.size(t)), opts)
  end

  @impl true
  # Away from the device the source stays usable, as on Nx.BinaryBackend: its memory goes
  # back to the pool when the last reference to it is garbage-collected. With
  # `config :nx_vulkan, free_on_transfer: true` (EXLA's behaviour) it is freed at once, and
  # a later use raises.
  def backend_transfer(%T{} = t, backend, _opts) when backend in @names, do: t

  def backend_transfer(%T{} = t, backend, opts) do
    copy = backend_copy(t, backend, opts)
    if Application.get_env(:nx_vulkan, :free_on_transfer, false), do: backend_deallocate(t)
    copy
  end

  @impl true
  def backend_deallocate(%T{data: %Handle{ref: ref}}) do
    if Native.t_deallocate(ref), do: :ok, else: :already_deallocated
  end

  @impl true
  def to_pointer(_tensor, _opts) do
    raise ArgumentError, "Nx.Vulkan.Backend does not support to_pointer/2: Vulkan memory has no portable pointer"
  end

  @impl true
  def from_pointer(_pointer, _type, _shape, _backend_opts, _opts) do
    raise ArgumentError, "Nx.Vulkan.Backend does not support from_pointer/5: Vulkan memory has no portable pointer"
  end

  # Nx.Vulkan.Compiler's fusion groups and generated kernels: one launch each
  # (Nx.Vulkan.Backend.Blocks); any other block runs its default function.
  @impl true
  def block(%Nx.Vulkan.Fused{} = f, %T{} = out, args, fun), do: Blocks.fused(f, out, args, fun)
  def block(%Nx.Vulkan.Generated{} = g, out, args, fun), do: Blocks.generated(g, out, args, fun)
  def block(struct, _output, args, fun), do: apply(fun, [struct | args])

  ## Creation

  @impl true
  def iota(out, axis, _opts) do
    run(:iota, [out, axis, []], out, fn -> Native.t_iota(shape_list(out), type_name(out.type), axis) end)
  end

  @impl true
  def eye(out, _opts) do
    run(:eye, [out, []], out, fn -> Native.t_eye(shape_list(out), type_name(out.type)) end)
  end

  ## Shape

  @impl true
  def reshape(out, t), do: run(:reshape, [out, t], out, fn -> Native.t_reshape(ref!(t), shape_list(out)) end)

  @impl true
  def squeeze(out, t, axes),
    do: run(:squeeze, [out, t, axes], out, fn -> Native.t_reshape(ref!(t), shape_list(out)) end)

  @impl true
  def broadcast(out, t, shape, axes) do
    run(:broadcast, [out, t, shape, axes], out, fn ->
      Native.t_broadcast(ref!(t), Tuple.to_list(shape), axes)
    end)
  end

  @impl true
  def transpose(out, t, axes),
    do: run(:transpose, [out, t, axes], out, fn -> Native.t_transpose(ref!(t), axes) end)

  @impl true
  def slice(out, t, start, lengths, strides) do
    run(:slice, [out, t, start, lengths, strides], out, fn ->
      Native.t_slice(ref!(t), clamp_starts(t.shape, start, lengths), lengths, strides)
    end)
  end

  @impl true
  def put_slice(out, t, start, update) do
    run(:put_slice, [out, t, start, update], out, fn ->
      starts = clamp_starts(t.shape, start, Tuple.to_list(update.shape))
      Native.t_put_slice(ref!(t), starts, ref!(update), type_name(out.type))
    end)
  end

  @impl true
  def concatenate(out, tensors, axis) do
    run(:concatenate, [out, tensors, axis], out, fn ->
      Native.t_concatenate(Enum.map(tensors, &ref!/1), axis, type_name(out.type))
    end)
  end

  # A size-1 axis inserted into each input (metadata only), then one concatenation.
  @impl true
  def stack(out, tensors, axis) do
    run(:stack, [out, tensors, axis], out, fn ->
      with {:ok, refs} <-
             map_ok(tensors, &Native.t_reshape(ref!(&1), &1.shape |> Tuple.insert_at(axis, 1) |> Tuple.to_list())) do
        Native.t_concatenate(refs, axis, type_name(out.type))
      end
    end)
  end

  # Batches are slices along axis 0 (the `:repeat` leftover wraps around to the start),
  # made lazily as the stream is consumed, as in Nx.BinaryBackend.
  @impl true
  def to_batched(out, tensor, opts) do
    batch_size = elem(out.shape, 0)
    axis_size = elem(tensor.shape, 0)
    remainder = rem(axis_size, batch_size)
    full = div(axis_size, batch_size)
    last = if remainder != 0 and opts[:leftover] == :repeat, do: full, else: full - 1

    ref =
      try do
        ref!(tensor)
      catch
        {:nx_vulkan_unsupported, msg} -> {:fallback, msg}
      end

    if match?({:fallback, _}, ref),
      do: Fallback.call(:to_batched, [out, tensor, opts], elem(ref, 1)),
      else: batches(out, ref, tensor.shape, batch_size, remainder, full, last)
  end

  defp batches(out, ref, shape, batch_size, remainder, full, last) do
    rest = tl(Tuple.to_list(shape))

    slice = fn start, len ->
      Native.t_slice(ref, [start | Enum.map(rest, fn _ -> 0 end)], [len | rest], [1 | Enum.map(rest, fn _ -> 1 end)])
    end

    Stream.map(0..last//1, fn i ->
      result =
        if i == full do
          with {:ok, head} <- slice.(full * batch_size, remainder),
               {:ok, wrapped} <- slice.(0, batch_size - remainder) do
            Native.t_concatenate([head, wrapped], 0, type_name(out.type))
          end
        else
          slice.(i * batch_size, batch_size)
        end

      case result do
        {:ok, r} -> wrap(out, r)
        {:error, {kind, msg}} -> raise error_module(kind), "Nx.Vulkan.Backend.to_batched: #{msg}"
      end
    end)
  end

  defp map_ok(list, fun) do
    Enum.reduce_while(list, {:ok, []}, fn x, {:ok, acc} ->
      case fun.(x) do
        {:ok, r} -> {:cont, {:ok, [r | acc]}}
        error -> {:halt, error}
      end
    end)
    |> case do
      {:ok, acc} -> {:ok, Enum.reverse(acc)}
      error -> error
    end
  end

  @impl true
  def reverse(out, t, axes), do: run(:reverse, [out, t, axes], out, fn -> Native.t_reverse(ref!(t), axes) end)

  @impl true
  def pad(out, t, value, config) do
    run(:pad, [out, t, value, config], out, fn ->
      Native.t_pad(ref!(t), ref!(value), config, type_name(out.type))
    end)
  end

  # Start indices may be scalar tensors (dynamic slicing): Nx clamps them so the slice
  # stays inside the tensor. Reading a tensor index waits for the GPU.
  defp clamp_starts(shape, starts, lengths) do
    [Tuple.to_list(shape), starts, lengths]
    |> Enum.zip_with(fn [dim, start, len] ->
      start = if is_integer(start), do: start, else: Nx.to_number(start)
      start |> max(0) |> min(dim - len)
    end)
  end

  @impl true
  def bitcast(out, t), do: run(:bitcast, [out, t], out, fn -> Native.t_bitcast(ref!(t), type_name(out.type)) end)

  @impl true
  def as_type(out, t),
    do: run(:as_type, [out, t], out, fn -> Native.t_as_type(ref!(t), type_name(out.type)) end)

  ## Element-wise

  binary_ops =
    [:add, :subtract, :multiply, :divide, :pow, :remainder, :atan2, :min, :max, :quotient] ++
      [:bitwise_and, :bitwise_or, :bitwise_xor] ++
      [:equal, :not_equal, :greater, :less, :greater_equal, :less_equal] ++
      [:logical_and, :logical_or, :logical_xor]

  for op <- binary_ops do
    @impl true
    def unquote(op)(out, a, b) do
      run(unquote(op), [out, a, b], out, fn ->
        Native.t_binary(unquote(Atom.to_string(op)), ref!(a), ref!(b), shape_list(out), type_name(out.type))
      end)
    end
  end

  # Shifts by a negative amount raise, as Nx.BinaryBackend does (Checks.shift!/2).
  for {op, dir} <- [left_shift: "left", right_shift: "right"] do
    @impl true
    def unquote(op)(out, a, b) do
      Checks.shift!(unquote(dir), b)

      run(unquote(op), [out, a, b], out, fn ->
        Native.t_binary(unquote(Atom.to_string(op)), ref!(a), ref!(b), shape_list(out), type_name(out.type))
      end)
    end
  end

  unary_ops =
    [:exp, :expm1, :log, :log1p, :sigmoid, :cos, :sin, :tan, :cosh, :sinh, :tanh] ++
      [:acos, :asin, :atan, :acosh, :asinh, :atanh, :sqrt, :rsqrt, :cbrt, :erf, :erfc, :erf_inv] ++
      [:abs, :bitwise_not, :ceil, :conjugate, :floor, :negate, :round, :sign] ++
      [:count_leading_zeros, :population_count, :real, :imag, :is_nan, :is_infinity]

  for op <- unary_ops do
    @impl true
    def unquote(op)(out, t) do
      run(unquote(op), [out, t], out, fn ->
        Native.t_unary(unquote(Atom.to_string(op)), ref!(t), type_name(out.type))
      end)
    end
  end

  ## Reductions

  for op <- [:sum, :product, :reduce_max, :reduce_min, :all, :any] do
    @impl true
    def unquote(op)(out, t, opts) do
      run(unquote(op), [out, t, opts], out, fn ->
        Native.t_reduce(
          unquote(Atom.to_string(op)),
          ref!(t),
          opts[:axes],
          opts[:keep_axes] || false,
          type_name(out.type)
        )
      end)
    end
  end

  for op <- [:window_sum, :window_product, :window_max, :window_min] do
    @impl true
    def unquote(op)(out, t, window_dimensions, opts) do
      run(unquote(op), [out, t, window_dimensions, opts], out, fn ->
        rank = tuple_size(t.shape)

        Native.t_window(
          unquote(Atom.to_string(op)),
          ref!(t),
          Tuple.to_list(window_dimensions),
          opts[:strides] || List.duplicate(1, rank),
          opts[:padding] || List.duplicate({0, 0}, rank),
          opts[:window_dilations] || List.duplicate(1, rank),
          type_name(out.type)
        )
      end)
    end
  end

  for {op, is_min} <- [window_scatter_max: false, window_scatter_min: true] do
    @impl true
    def unquote(op)(out, t, source, init_value, window_dimensions, opts) do
      run(unquote(op), [out, t, source, init_value, window_dimensions, opts], out, fn ->
        rank = tuple_size(t.shape)

        Native.t_window_scatter(
          unquote(is_min),
          ref!(t),
          ref!(source),
          ref!(init_value),
          Tuple.to_list(window_dimensions),
          opts[:strides] || List.duplicate(1, rank),
          opts[:padding] || List.duplicate({0, 0}, rank),
          type_name(out.type)
        )
      end)
    end
  end

  for {op, is_min} <- [argmax: false, argmin: true] do
    @impl true
    def unquote(op)(out, t, opts) do
      run(unquote(op), [out, t, opts], out, fn ->
        tie_high = opts[:tie_break] == :high

        Native.t_argreduce(
          ref!(t),
          opts[:axis],
          opts[:keep_axis] || false,
          unquote(is_min),
          tie_high,
          type_name(out.type)
        )
      end)
    end
  end

  ## Selection and indexing

  @impl true
  def select(out, pred, on_true, on_false) do
    run(:select, [out, pred, on_true, on_false], out, fn ->
      Native.t_select(ref!(pred), ref!(on_true), ref!(on_false), shape_list(out), type_name(out.type))
    end)
  end

  @impl true
  def clip(out, t, min, max) do
    run(:clip, [out, t, min, max], out, fn ->
      Native.t_clip(ref!(t), ref!(min), ref!(max), type_name(out.type))
    end)
  end

  # Indices out of range are clamped to their axis (as in EXLA); Nx.BinaryBackend raises.
  @impl true
  def gather(out, t, indices, opts) do
    Checks.indices!(t, indices, opts[:axes])

    run(:gather, [out, t, indices, opts], out, fn ->
      Native.t_gather(ref!(t), ref!(indices), opts[:axes])
    end)
  end

  # Duplicate positions: the last update wins (indexed_put) or all are summed (indexed_add,
  # floats in f64 as Nx.BinaryBackend does); out-of-range indices are clamped, as EXLA
  # and JAX do, or raise in the bounds-checked mode (Checks.indices!/3).
  for {op, put} <- [indexed_put: true, indexed_add: false] do
    @impl true
    def unquote(op)(out, target, indices, updates, opts) do
      Checks.indices!(target, indices, opts[:axes])

      run(unquote(op), [out, target, indices, updates, opts], out, fn ->
        Native.t_indexed(unquote(put), ref!(target), ref!(indices), ref!(updates), opts[:axes], type_name(out.type))
      end)
    end
  end

  ## Sorting (stable; ascending puts NaN last, descending first, as Nx.BinaryBackend)

  for {op, indices} <- [sort: false, argsort: true] do
    @impl true
    def unquote(op)(out, t, opts) do
      run(unquote(op), [out, t, opts], out, fn ->
        Native.t_sort(ref!(t), opts[:axis], opts[:direction] == :desc, unquote(indices), type_name(out.type))
      end)
    end
  end

  ## Fourier transforms (a direct DFT per output element; parts within :eps become 0)

  for {op, inverse} <- [fft: false, ifft: true] do
    @impl true
    def unquote(op)(out, t, opts) do
      run(unquote(op), [out, t, opts], out, fn ->
        eps = (opts[:eps] || 0) * 1.0
        Native.t_fft(ref!(t), unquote(inverse), opts[:length], opts[:axis], eps, type_name(out.type))
      end)
    end
  end

  ## Linear algebra

  @impl true
  def dot(out, a, ca, ba, b, cb, bb) do
    run(:dot, [out, a, ca, ba, b, cb, bb], out, fn ->
      Native.t_dot(ref!(a), ca, ba, ref!(b), cb, bb, type_name(out.type))
    end)
  end

  @impl true
  def conv(out, input, kernel, opts) do
    run(:conv, [out, input, kernel, opts], out, fn ->
      keys =
        [:strides, :padding, :input_dilation, :kernel_dilation, :feature_group_size] ++
          [:batch_group_size, :input_permutation, :kernel_permutation, :output_permutation]

      Native.t_conv(ref!(input), ref!(kernel), Map.new(keys, &{&1, opts[&1]}), type_name(out.type))
    end)
  end

  @singular "can't solve for singular matrix"

  @impl true
  def triangular_solve(out, a, b, opts) do
    run(:triangular_solve, [out, a, b, opts], out, fn ->
      transform = Atom.to_string(opts[:transform_a])
      ty = type_name(out.type)

      case Native.t_triangular_solve(ref!(a), ref!(b), opts[:left_side], opts[:lower], transform, ty) do
        # A zero on the diagonal: Nx.BinaryBackend's error, word for word.
        {:error, {:invalid_argument, msg}} = error ->
          if String.ends_with?(msg, @singular), do: raise(ArgumentError, @singular), else: error

        result ->
          result
      end
    end)
  end

  ## Reductions with an Elixir function (see Nx.Vulkan.Backend.ReduceFun)

  @impl true
  def reduce(out, tensor, acc, opts, fun) do
    case ReduceFun.reduce(out, tensor, acc, opts, fun) do
      {:ok, result} -> result
      :error -> Fallback.call(:reduce, [out, tensor, acc, opts, fun], @not_one_op)
    end
  end

  @impl true
  def window_reduce(out, tensor, acc, window_dimensions, opts, fun) do
    case ReduceFun.window_reduce(out, tensor, acc, window_dimensions, opts, fun) do
      {:ok, result} -> result
      :error -> Fallback.call(:window_reduce, [out, tensor, acc, window_dimensions, opts, fun], @not_one_op)
    end
  end

  ## Everything else: the counted host fallback (see Nx.Vulkan.Backend.Fallback).

  for {name, arity} <- Nx.Backend.behaviour_info(:callbacks),
      not Module.defines?(__MODULE__, {name, arity}) do
    args = Macro.generate_arguments(arity, __MODULE__)

    @impl true
    def unquote(name)(unquote_splicing(args)) do
      Fallback.call(unquote(name), unquote(args), "no Vulkan kernel yet")
    end
  end
end
