defmodule Nx.Vulkan.Compiler.Fusion do
  @moduledoc false
  # The fusion pass of Nx.Vulkan.Compiler. It finds groups of f32/f64 element-wise ops
  # (negate abs exp log sqrt add subtract multiply divide max min) and reductions over
  # trailing axes (sum reduce_max reduce_min) whose intermediate values nobody outside
  # the group reads, and replaces each group by one `Nx.block/4` node carrying an
  # `Nx.Vulkan.Fused` program: one kernel instead of one per op.
  #
  # A group has a domain D (the shape its full-size values have) split at axis k: the
  # reductions fold the axes k.. of D, and "row" values have D's first k axes followed by
  # ones (keep_axes), so Nx's broadcasting puts them where the kernel does. Values of
  # other shapes end the group (they are computed unfused and read as inputs, which the
  # engine broadcasts by Nx's rules). Expressions with control flow or hooks (while,
  # cond, fun, hook, runtime_call) or vectorized axes are left unfused.

  alias Nx.Defn.Expr
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Compiler.Graph

  @unary [:negate, :abs, :exp, :log, :sqrt]
  @binary [:add, :subtract, :multiply, :divide, :max, :min]
  @reductions [:sum, :reduce_max, :reduce_min]
  @types [{:f, 32}, {:f, 64}]
  @max_slots 32
  @max_inputs 8
  @max_reductions 4
  # Reductions fuse when the domain has at least this many rows, or is this small.
  @min_rows 64
  @small_domain 65_536

  # Ops that generated kernels run too (Nx.Vulkan.Compiler.Generation).
  @generatable ~w(input constant negate abs sqrt exp add subtract multiply divide max min sum reduce_max reduce_min)

  @doc false
  # The expression with its fusion groups replaced by `Nx.block/4` nodes. With
  # `leave_generatable: true`, groups without a reduction whose ops generated kernels also
  # run are left for them (Nx.Vulkan.Compiler.Generation, which takes comparisons, selects
  # and conversions into the same kernel).
  def rewrite(output, opts \\ []) do
    graph = Graph.build(output)
    groups = plan(graph, Keyword.get(opts, :leave_generatable, false))
    if groups == %{}, do: output, else: Graph.rewrite(output, groups, &fused_block/4)
  catch
    :unfusable -> output
  end

  ## Planning: groups grown from each unassigned candidate root, consumers first.

  defp plan(graph, leave?) do
    {groups, _assigned} =
      Enum.reduce(graph.order, {%{}, MapSet.new()}, fn id, {groups, assigned} ->
        node = graph.nodes[id]

        with false <- MapSet.member?(assigned, id),
             {:ok, group} <- grow(node, graph, assigned, leave?) do
          {Map.put(groups, id, group), MapSet.union(assigned, MapSet.new(Map.keys(group.members)))}
        else
          _ -> {groups, assigned}
        end
      end)

    groups
  end

  defp grow(%T{type: type} = root, graph, assigned, leave?) when type in @types do
    case root_domain(root) do
      {:ok, shape, k} ->
        group = %{root: root, type: type, shape: shape, k: k, members: %{root.data.id => root}}
        group |> absorb(graph, assigned) |> finish(leave?)

      :error ->
        :error
    end
  end

  defp grow(_root, _graph, _assigned, _leave?), do: :error

  # A reduction root sets the domain (its operand's shape) and the split; an element-wise
  # root gives the domain, and the split waits for a reduction.
  defp root_domain(%T{data: %Expr{op: op, args: [operand, opts]}} = t) when op in @reductions do
    case trailing_split(t, operand, opts) do
      {:ok, k} -> {:ok, operand.shape, k}
      :error -> :error
    end
  end

  defp root_domain(%T{data: %Expr{op: op}} = t) when op in @unary or op in @binary do
    if fusible_operands?(t), do: {:ok, t.shape, nil}, else: :error
  end

  defp root_domain(_), do: :error

  # The first reduced axis, when the reduced axes are the operand's last ones.
  defp trailing_split(t, %T{} = operand, opts) do
    rank = tuple_size(operand.shape)
    axes = Enum.sort(opts[:axes] || Enum.to_list(0..(rank - 1)//1))

    with true <- rank > 0 and axes != [] and operand.type == t.type,
         k = hd(axes),
         true <- axes == Enum.to_list(k..(rank - 1)) do
      {:ok, k}
    else
      _ -> :error
    end
  end

  # Element-wise operands: tensors of the group's type, or constants.
  defp fusible_operands?(%T{type: type, data: %Expr{args: args}}) do
    Enum.all?(args, fn
      %T{data: %Expr{op: :constant, args: [v]}} -> constant_value?(v)
      %T{type: ^type} -> true
      _ -> false
    end)
  end

  defp constant_value?(v), do: is_number(v) or v in [:nan, :infinity, :neg_infinity]

  # Adds operands whose users are all in the group and whose shape fits, until none does.
  defp absorb(group, graph, assigned) do
    candidate =
      group.members
      |> Map.values()
      |> Enum.flat_map(&tensor_args/1)
      |> Enum.uniq_by(& &1.data.id)
      |> Enum.find_value(fn arg ->
        id = arg.data.id

        with false <- Map.has_key?(group.members, id) or MapSet.member?(assigned, id),
             true <- MapSet.subset?(graph.users[id], MapSet.new(Map.keys(group.members))),
             {:ok, group} <- admit(group, arg),
             true <- within_limits?(program(group)) do
          group
        else
          _ -> nil
        end
      end)

    if candidate, do: absorb(candidate, graph, assigned), else: group
  end

  defp tensor_args(%T{data: %Expr{op: :metadata, args: [expr, _]}}), do: [expr]
  defp tensor_args(%T{data: %Expr{op: :constant}}), do: []
  defp tensor_args(%T{data: %Expr{args: args}}), do: for(%T{data: %Expr{}} = a <- args, do: a)

  defp admit(group, %T{data: %Expr{op: :metadata, args: [%T{} = inner, _]}} = t) do
    if inner.shape == t.shape and inner.type == t.type and placed?(group, t),
      do: {:ok, add(group, t)},
      else: :error
  end

  defp admit(group, %T{type: type, data: %Expr{op: op, args: [operand, opts]}} = t)
       when op in @reductions and type == group.type do
    keep_shape = row_shape(group.shape, trailing_split(t, operand, opts))

    cond do
      operand.shape != group.shape or t.shape != keep_shape -> :error
      group.k == nil -> {:ok, add(%{group | k: split_of(t, operand, opts)}, t)}
      split_of(t, operand, opts) == group.k -> {:ok, add(group, t)}
      true -> :error
    end
  end

  defp admit(group, %T{type: type, data: %Expr{op: op}} = t)
       when (op in @unary or op in @binary) and type == group.type do
    if fusible_operands?(t) and placed?(group, t), do: {:ok, add(group, t)}, else: :error
  end

  defp admit(_group, _t), do: :error

  defp split_of(t, operand, opts), do: elem(trailing_split(t, operand, opts), 1)

  defp add(group, t), do: put_in(group.members[t.data.id], t)

  # Full values have the domain's shape; row values its rows followed by ones.
  defp placed?(group, t),
    do: t.shape == group.shape or (group.k != nil and t.shape == row_shape(group.shape, {:ok, group.k}))

  defp row_shape(shape, {:ok, k}) do
    shape |> Tuple.to_list() |> Enum.with_index(fn d, i -> if i < k, do: d, else: 1 end) |> List.to_tuple()
  end

  defp row_shape(_shape, :error), do: nil

  defp within_limits?(program) do
    length(program.inputs) <= @max_inputs and length(program.slots) <= @max_slots and
      reductions(program) <= @max_reductions
  end

  defp reductions(program),
    do: Enum.count(program.slots, fn {name, _, _, _} -> name in ~w(sum reduce_max reduce_min) end)

  # Worth a kernel of its own: two ops or more, at least one input, non-empty rows; and,
  # with `leave?`, not one that generated kernels run.
  defp finish(group, leave?) do
    group = %{group | k: group.k || max(tuple_size(group.shape) - 1, 0)}
    program = program(group)
    ops = Enum.count(program.slots, fn {name, _, _, _} -> name not in ~w(input constant) end)
    cols = group.shape |> Tuple.to_list() |> Enum.drop(group.k) |> Enum.product()

    rows = group.shape |> Tuple.to_list() |> Enum.take(group.k) |> Enum.product()

    # The kernel folds each row in one workgroup: few long rows would leave the GPU idle
    # (a full reduction would be one workgroup), so those reductions stay unfused.
    wide_enough? = reductions(program) == 0 or rows >= @min_rows or rows * cols <= @small_domain

    generatable? = leave? and generatable?(group, program, k_axes(group))

    if ops >= 2 and program.inputs != [] and cols > 0 and wide_enough? and within_limits?(program) and
         not generatable?,
       do: {:ok, Map.put(group, :program, program)},
       else: :error
  end

  # The axes a group's reductions fold: those from `k` on.
  defp k_axes(group), do: Enum.to_list(group.k..(tuple_size(group.shape) - 1)//1)

  # Whether Nx.Vulkan.Compiler.Generation takes the whole group: element-wise ops it
  # runs, reductions of rows it folds, no metadata nodes, constants of the group's type
  # or small integers, and no more constants than one generated kernel's push words hold
  # (7: two each in 64-bit types).
  defp generatable?(group, program, axes) do
    constant_words =
      Enum.count(program.slots, &(elem(&1, 0) == "constant")) * if(elem(group.type, 1) == 64, do: 2, else: 1)

    folds? = reductions(program) == 0 or Nx.Vulkan.Compiler.Generation.foldable?(group.shape, axes)

    folds? and constant_words <= 7 and Enum.all?(program.slots, &(elem(&1, 0) in @generatable)) and
      Enum.all?(Map.values(group.members), fn %T{data: %Expr{op: op, args: args}} ->
        op != :metadata and Enum.all?(args, &generatable_operand?(&1, group.type))
      end)
  end

  defp generatable_operand?(%T{type: type, data: %Expr{op: :constant}}, type), do: true
  defp generatable_operand?(%T{data: %Expr{op: :constant, args: [v]}}, _), do: is_integer(v) and abs(v) <= 16_777_216
  defp generatable_operand?(_, _), do: true

  ## The program: members in dependency order, each operand outside the group an input.

  defp program(group) do
    state = %{slots: [], slot_of: %{}, inputs: [], reduce_opts: %{}, constant_shapes: %{}}
    state = emit(group.root, group, state)
    %{state | slots: Enum.reverse(state.slots), inputs: Enum.reverse(state.inputs)}
  end

  defp emit(%T{data: %Expr{id: id}} = t, group, state) do
    cond do
      Map.has_key?(state.slot_of, id) -> state
      not Map.has_key?(group.members, id) -> emit_leaf(t, state)
      true -> emit_member(t, group, state)
    end
  end

  defp emit_leaf(%T{data: %Expr{id: id, op: :constant, args: [v]}} = t, state) do
    state = push(state, id, {"constant", 0, 0, v})
    put_in(state.constant_shapes[state.slot_of[id]], t.shape)
  end

  defp emit_leaf(%T{data: %Expr{id: id}} = t, state) do
    state = %{state | inputs: [t | state.inputs]}
    push(state, id, {"input", length(state.inputs) - 1, 0, 0})
  end

  defp emit_member(%T{data: %Expr{id: id, op: :metadata, args: [inner, _]}}, group, state) do
    state = emit(inner, group, state)
    put_in(state.slot_of[id], state.slot_of[inner.data.id])
  end

  defp emit_member(%T{data: %Expr{id: id, op: op, args: [operand, opts]}}, group, state) when op in @reductions do
    state = emit(operand, group, state)
    state = push(state, id, {Atom.to_string(op), state.slot_of[operand.data.id], 0, 0})
    put_in(state.reduce_opts[state.slot_of[id]], opts)
  end

  defp emit_member(%T{data: %Expr{id: id, op: op, args: args}}, group, state) do
    state = Enum.reduce(args, state, &emit(&1, group, &2))

    case Enum.map(args, &state.slot_of[&1.data.id]) do
      [a] -> push(state, id, {Atom.to_string(op), a, 0, 0})
      [a, b] -> push(state, id, {Atom.to_string(op), a, b, 0})
    end
  end

  defp push(state, id, slot) do
    index = length(state.slots)
    %{state | slots: [slot | state.slots], slot_of: Map.put(state.slot_of, id, index)}
  end

  ## Rebuilding: group roots become blocks.

  defp fused_block(root, group, cache, rebuild) do
    {inputs, cache} = Enum.map_reduce(group.program.inputs, cache, rebuild)
    per_row = root.shape != group.shape

    struct = %Nx.Vulkan.Fused{
      type: group.type,
      shape: Tuple.to_list(group.shape),
      row_axes: group.k,
      per_row: per_row,
      slots: group.program.slots,
      reduce_opts: group.program.reduce_opts,
      constant_shapes: group.program.constant_shapes
    }

    # The block's default expression, as Nx.block/4 builds it: the program replayed with
    # Nx over parameters (not the original nodes, whose ids the rest of the graph reuses).
    params = Enum.with_index(inputs, fn t, i -> Expr.parameter(t, root.data.context, i) end)
    default = Nx.Vulkan.Fused.evaluate(struct, params)

    args = [struct, inputs, default, default_fun(length(inputs))]
    {%{root | data: %Expr{id: Expr.id(), op: :block, args: args, context: root.data.context}}, cache}
  end

  # The block's default implementation (`Nx.Vulkan.Fused.evaluate/2`), of the arity
  # `Nx.block/4` calls it with: the struct and one argument per input.
  for n <- 1..@max_inputs do
    vars = Macro.generate_arguments(n, __MODULE__)

    defp default_fun(unquote(n)) do
      fn struct, unquote_splicing(vars) -> Nx.Vulkan.Fused.evaluate(struct, unquote(vars)) end
    end
  end
end
