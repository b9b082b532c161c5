defmodule Nx.Vulkan.Compiler.Generation do
  @moduledoc false
  # The generation pass of Nx.Vulkan.Compiler, after fusion: groups of element-wise ops
  # over one shape (`Nx.Vulkan.Generated`'s ops, `select` and constants) whose
  # intermediate values nobody outside the group reads, each replaced by one
  # `Nx.block/4` node that the backend runs as one generated kernel.
  #
  # A group computes in one type T of f32, f64, s32, u32, s64 and u64. Its members give
  # results of type T, or u8 from a comparison; their operands are of type T or u8, or
  # constants that T holds exactly. Conversions (`as_type`) join at the ends: into T from
  # an input of any real type, and out of T as the group's result, where their kernels
  # would compute in T's class. Then keeping each value in a register equals storing
  # and reloading it, so the kernel's bytes are the ops' one by one (the engine checks
  # the same rules, `Group::check`, and the block's default runs the ops otherwise).
  # Members have the group's shape; inputs broadcast to it by Nx's rules. A member that
  # something outside the group reads too is one more output of the kernel (the block
  # gives a tuple), unless what reads it leads back into the group.
  #
  # A group may also fold: its root is a sum, product, reduce_max or reduce_min of a value
  # of its type, and the domain is that value's shape. Reductions of the same axes that
  # keep them join as members (the element-wise members read them as Nx broadcasts
  # them: a row max that a subtraction reads). The kernel folds each output point with
  # one invocation, in order: short rows (@max_row) and columns (@max_folded).

  alias Nx.Defn.Expr
  alias Nx.Tensor, as: T
  alias Nx.Vulkan.Compiler.Graph
  alias Nx.Vulkan.Generated

  @types [{:f, 32}, {:f, 64}, {:s, 32}, {:u, 32}, {:s, 64}, {:u, 64}]
  @reductions [:sum, :product, :reduce_max, :reduce_min]
  @reduction_names Enum.map(@reductions, &Atom.to_string/1)
  @binary_names Generated.binary_ops()
  # A generated reduction folds each output point with one invocation. Where the folded
  # axes end the shape (rows), neighbouring invocations read a row apart: rows longer
  # than @max_row stay with the reduction kernels and fused.comp, which fold a row with a
  # workgroup. Where a kept axis ends it (columns), neighbours read neighbours.
  @max_row 64
  @max_folded 4096
  @unary Enum.map(Generated.unary_ops(), &String.to_atom/1)
  @binary Enum.map(Generated.binary_ops(), &String.to_atom/1)
  @predicates Enum.map(Generated.predicates(), &String.to_atom/1)
  # The engine's limits (codegen/ir.rs): 12 buffers (inputs and outputs), 128 nodes, 7
  # push words of constants (one each, two in a 64-bit type).
  @max_buffers 12
  @max_nodes 128
  @max_constant_words 7

  @doc false
  # The expression with its groups replaced by `Nx.block/4` nodes.
  def rewrite(output) do
    graph = Graph.build(output)
    groups = plan(graph)
    if groups == %{}, do: output, else: Graph.rewrite(output, groups, &generated_block(&1, &2, &3, &4, groups))
  catch
    :unfusable -> output
  end

  ## Planning: groups grown from each unassigned candidate root, consumers first.

  defp plan(graph) do
    graph = Map.put(graph, :beyond, %{})

    {groups, _assigned, _graph} =
      Enum.reduce(graph.order, {%{}, MapSet.new(), graph}, fn id, {groups, assigned, graph} ->
        with false <- MapSet.member?(assigned, id),
             {:ok, group} <- grow(graph.nodes[id], graph, assigned) do
          # Each extra output is replaced by its element of the group's block.
          groups =
            group.extra
            |> Enum.with_index(1)
            |> Enum.reduce(Map.put(groups, id, group), fn {t, k}, groups ->
              Map.put(groups, t.data.id, {:output_of, id, k})
            end)

          {groups, MapSet.union(assigned, MapSet.new(Map.keys(group.members))), merged(graph, group)}
        else
          _ -> {groups, assigned, graph}
        end
      end)

    groups
  end

  # Once a group of several outputs is planned, whatever reaches one of its members
  # reaches every output (one block computes them all): later walks (`downstream/3`)
  # continue from a member to the readers of all of them.
  defp merged(graph, %{extra: []}), do: graph

  defp merged(graph, group) do
    ids = Map.keys(group.members)

    exits =
      [group.root | group.extra]
      |> Enum.flat_map(&MapSet.to_list(graph.users[&1.data.id]))
      |> Enum.reject(&(&1 == :output or Map.has_key?(group.members, &1)))

    %{graph | beyond: Enum.reduce(ids, graph.beyond, &Map.put(&2, &1, exits))}
  end

  defp grow(%T{} = root, graph, assigned) do
    case class_of(root) do
      {:ok, type} ->
        {shape, reduce_axes} = domain(root)

        group = %{
          root: root,
          type: type,
          # The domain: the root's shape, or a reduction's operand's.
          shape: shape,
          reduce_axes: reduce_axes,
          members: %{root.data.id => root},
          # Members read outside the group too, and what their readers lead to.
          extra: [],
          downstream: MapSet.new()
        }

        group |> absorb(graph, assigned) |> finish()

      :error ->
        :error
    end
  end

  @doc false
  # Whether a generated kernel folds `axes` of `shape` (see @max_row).
  def foldable?(_shape, []), do: false

  def foldable?(shape, axes) do
    folded = Enum.reduce(axes, 1, &(elem(shape, &1) * &2))
    limit = if (tuple_size(shape) - 1) in axes, do: @max_row, else: @max_folded
    folded in 1..limit//1
  end

  # A reduction group's domain is its root's operand, folded along the root's axes.
  defp domain(%T{data: %Expr{op: op, args: [x, opts]}}) when op in @reductions,
    do: {x.shape, reduced_axes(x, opts)}

  defp domain(root), do: {root.shape, []}

  defp reduced_axes(x, opts), do: Enum.sort(opts[:axes] || Enum.to_list(0..(tuple_size(x.shape) - 1)//1))

  # The type a node computes in, where it can be a member. A comparison computes in its
  # operands' type (constants take it). A reduction folds a tensor of its own type (the
  # engine's reduction kernels would compute in it) along at most @max_folded elements.
  # (A reduction of a constant, which Nx may give the domain's shape, is not generated:
  # the kernel holds a constant once, not per element.)
  defp class_of(%T{type: type, data: %Expr{op: op, args: [%T{type: type} = x, opts]}})
       when op in @reductions and type in @types do
    if not constant?(x) and foldable?(x.shape, reduced_axes(x, opts)), do: {:ok, type}, else: :error
  end

  defp class_of(%T{data: %Expr{op: op}}) when op in @reductions, do: :error

  defp class_of(%T{type: {:u, 8}, data: %Expr{op: op, args: args}}) when op in @predicates do
    case args |> Enum.reject(&constant?/1) |> Enum.map(& &1.type) |> Enum.uniq() do
      [type] when type in @types -> {:ok, type}
      _ -> :error
    end
  end

  defp class_of(%T{data: %Expr{op: op}}) when op in @predicates, do: :error

  defp class_of(%T{type: type, data: %Expr{op: op}}) when (op in @unary or op in @binary) and type in @types,
    do: {:ok, type}

  defp class_of(%T{type: type, data: %Expr{op: :select, args: [pred, on_true, on_false]}}) when type in @types do
    values_fit? = Enum.all?([on_true, on_false], &(constant?(&1) or &1.type == type))
    # (A constant predicate would travel in the group's type; the engine wants u8.)
    if pred.type == {:u, 8} and not constant?(pred) and values_fit?, do: {:ok, type}, else: :error
  end

  # A conversion as the root computes in its operand's type, where its kernel would.
  defp class_of(%T{type: to, data: %Expr{op: :as_type, args: [%T{type: from}]}}) when from in @types do
    if conversion_class(from, to) == compute_class(from), do: {:ok, from}, else: :error
  end

  defp class_of(_), do: :error

  # A conversion that other members read: to the group's type, from an input of any real
  # type, computing in the group's class (the engine's `Compute::for_conversion`).
  defp converts_in?(%T{type: type, data: %Expr{op: :as_type, args: [%T{type: from}]}}, type),
    do: not complex?(from) and conversion_class(from, type) == compute_class(type)

  defp converts_in?(_, _), do: false

  defp complex?({:c, _}), do: true
  defp complex?(_), do: false

  # DType::compute and Compute::for_conversion (native/nx_vulkan/src/dtype.rs).
  defp compute_class({:f, 64}), do: :f64
  defp compute_class({kind, _}) when kind in [:f, :bf], do: :f32
  defp compute_class({:s, 64}), do: :i64
  defp compute_class({:u, 64}), do: :u64
  defp compute_class({:s, _}), do: :i32
  defp compute_class({:u, _}), do: :u32
  defp compute_class(other), do: other

  defp conversion_class(from, to) do
    cond do
      from == {:f, 64} or to == {:f, 64} -> :f64
      float?(from) and not float?(to) and elem(to, 1) <= 16 -> :f32
      from in [{:s, 64}, {:u, 64}] -> compute_class(from)
      true -> compute_class(to)
    end
  end

  defp float?({kind, _}), do: kind in [:f, :bf]

  defp constant?(%T{data: %Expr{op: :constant}}), do: true
  defp constant?(_), do: false

  # Whether member `t`'s operands fit a group of `type`: tensors of the type or u8, or
  # constants of the type, or integers that it holds exactly.
  defp operands_fit?(%T{data: %Expr{args: args}}, type) do
    Enum.all?(args, fn
      opts when is_list(opts) -> true
      %T{type: ^type, data: %Expr{op: :constant}} -> true
      %T{type: {:f, 32}, data: %Expr{op: :constant, args: [v]}} when type == {:f, 64} -> exact_f32?(v)
      %T{data: %Expr{op: :constant, args: [v]}} -> exact_integer?(v, type)
      %T{type: t} -> t == type or t == {:u, 8}
      _ -> false
    end)
  end

  # An f32 constant in an f64 group: its value as the constant holds it (the static
  # kernel widens that exactly), where the number is one an f32 holds.
  defp exact_f32?(v) when is_float(v) and abs(v) <= 3.4028234663852886e38 do
    <<r::float-32>> = <<v::float-32>>
    r == v
  end

  defp exact_f32?(v), do: is_integer(v) and abs(v) <= 16_777_216

  defp exact_integer?(v, {:f, 32}) when is_integer(v), do: abs(v) <= 16_777_216
  defp exact_integer?(v, {:f, 64}) when is_integer(v), do: abs(v) <= 9_007_199_254_740_992

  defp exact_integer?(v, {:s, bits}) when is_integer(v),
    do: v >= -Bitwise.bsl(1, bits - 1) and v < Bitwise.bsl(1, bits - 1)

  defp exact_integer?(v, {:u, bits}) when is_integer(v), do: v >= 0 and v < Bitwise.bsl(1, bits)
  defp exact_integer?(_, _), do: false

  # Adds operands, until none fits: one whose users are all in the group, or one read
  # outside it as an extra output.
  defp absorb(group, graph, assigned) do
    candidate =
      group.members
      |> Map.values()
      |> Enum.flat_map(&tensor_args/1)
      |> Enum.uniq_by(& &1.data.id)
      |> Enum.find_value(fn arg ->
        id = arg.data.id

        with false <- Map.has_key?(group.members, id) or MapSet.member?(assigned, id),
             false <- MapSet.member?(group.downstream, id),
             {:ok, group} <- placed(arg, group),
             true <- member?(arg, group.type),
             {:ok, group} <- join(group, arg, graph),
             true <- within_limits?(program(group)) do
          group
        else
          _ -> nil
        end
      end)

    if candidate, do: absorb(candidate, graph, assigned), else: group
  end

  # The group with `arg` placed in it, where `arg` has a value at each point of the
  # domain, or is a reduction that keeps its axes (one value per output point, which the
  # members of the domain read as Nx broadcasts it: along the folded axes) of the
  # group's folded axes. The first such reduction in a group of element-wise ops (a
  # softmax's sum, read by its division) makes the group fold its axes.
  defp placed(%T{data: %Expr{op: op, args: [x, opts]}}, group) when op in @reductions do
    axes = reduced_axes(x, opts)

    fits? =
      x.shape == group.shape and opts[:keep_axes] == true and not constant?(x) and
        (axes == group.reduce_axes or (group.reduce_axes == [] and foldable?(x.shape, axes)))

    if fits?, do: {:ok, %{group | reduce_axes: axes}}, else: :error
  end

  defp placed(arg, group), do: if(arg.shape == group.shape, do: {:ok, group}, else: :error)

  # `arg` as a member: an inner one if the group's members are all its users, else an
  # extra output, where none of its outside users leads back to a member (the kernel
  # would then wait for itself).
  defp join(group, %T{data: %Expr{id: id}} = arg, graph) do
    members = MapSet.new(Map.keys(group.members))
    outside = MapSet.difference(graph.users[id], members)

    with false <- MapSet.size(outside) == 0,
         {:ok, reached} <- downstream(MapSet.delete(outside, :output), members, graph) do
      group = put_in(group.members[id], arg)
      {:ok, %{group | extra: group.extra ++ [arg], downstream: MapSet.union(group.downstream, reached)}}
    else
      true -> {:ok, put_in(group.members[id], arg)}
      :error -> :error
    end
  end

  # Every node that `starts` lead to (through their users), unless one is a member or
  # the walk passes @max_walk nodes.
  @max_walk 4096
  defp downstream(starts, members, graph), do: walk(MapSet.to_list(starts), MapSet.new(), members, graph)

  defp walk([], seen, _members, _graph), do: {:ok, seen}

  defp walk([id | rest], seen, members, graph) do
    cond do
      MapSet.member?(seen, id) ->
        walk(rest, seen, members, graph)

      MapSet.member?(members, id) or MapSet.size(seen) > @max_walk ->
        :error

      true ->
        next = graph.users |> Map.get(id, MapSet.new()) |> MapSet.delete(:output) |> MapSet.to_list()
        walk(next ++ Map.get(graph.beyond, id, []) ++ rest, MapSet.put(seen, id), members, graph)
    end
  end

  # Whether an operand of the group can join it: an op computing in the group's type whose
  # operands fit, or a conversion into that type.
  # (A `metadata` node, such as grad's `stop_grad` and `custom_grad`, is its operand's value.)
  defp member?(%T{type: type, data: %Expr{op: :metadata, args: [%T{data: %Expr{}} | _]}}, type), do: true
  defp member?(%T{data: %Expr{op: :metadata}}, _type), do: false

  defp member?(t, type) do
    if converts_in?(t, type),
      do: true,
      else: class_of(t) == {:ok, type} and t.data.op != :as_type and operands_fit?(t, type)
  end

  defp tensor_args(%T{data: %Expr{op: :constant}}), do: []
  defp tensor_args(%T{data: %Expr{op: :metadata, args: [inner | _]}}), do: [inner]
  defp tensor_args(%T{data: %Expr{args: args}}), do: for(%T{data: %Expr{}} = a <- args, do: a)

  defp within_limits?(program) do
    buffers = length(program.inputs) + length(program.outputs)

    words =
      Enum.reduce(program.nodes, 0, fn
        {"constant", _, _, _, {_, 64}, _}, n -> n + 2
        {"constant", _, _, _, _, _}, n -> n + 1
        _, n -> n
      end)

    buffers <= @max_buffers and length(program.nodes) <= @max_nodes and words <= @max_constant_words
  end

  # Worth a kernel: two ops or more, the root's operands fit, at least one input.
  defp finish(group) do
    program = program(group)
    ops = Enum.count(program.nodes, fn {name, _, _, _, _, _} -> name not in ["input", "constant"] end)

    if ops >= 2 and operands_fit?(group.root, group.type) and program.inputs != [] and
         within_limits?(program) and not round_trip?(group, program) and shapes_kept?(group, program),
       do: {:ok, Map.put(group, :program, program)},
       else: :error
  end

  # Whether each output comes back in its own shape. The engine computes a node that
  # reads only reductions and constants once per output point (`Group::per_output`) and
  # stores it in the kept axes' shape: right for a reduction, not for a value of the
  # domain's shape (a sum plus a constant Nx broadcast to the domain).
  defp shapes_kept?(%{reduce_axes: []}, _program), do: true

  defp shapes_kept?(group, program) do
    per_point =
      Enum.reduce(program.nodes, {}, fn {name, _, _, _, _, _} = node, per ->
        p =
          cond do
            name == "input" -> false
            name == "constant" or name in @reduction_names -> true
            true -> node |> operand_nodes() |> Enum.all?(&elem(per, &1))
          end

        Tuple.insert_at(per, tuple_size(per), p)
      end)

    [group.root | group.extra]
    |> Enum.zip(program.outputs)
    |> Enum.all?(fn {t, o} -> not elem(per_point, o) or t.data.op in @reductions end)
  end

  defp operand_nodes({"select", p, a, b, _, _}), do: [p, a, b]
  defp operand_nodes({name, a, b, _, _, _}) when name in @binary_names, do: [a, b]
  defp operand_nodes({_name, a, _, _, _, _}), do: [a]

  # A conversion round trip, which the engine refuses (`Group::check_round_trips`): an
  # input of the other kind than the group's type (an integer its float rounds, or a
  # float into an integer type) and a converted result of that kind (not a predicate's).
  defp round_trip?(%{type: type, root: root, extra: extra}, program) do
    float_class = float?(type)
    precision = if type == {:f, 32}, do: 24, else: 53

    loads_other =
      Enum.any?(program.inputs, fn {%T{type: t}, _reads} ->
        float?(t) != float_class and (not float_class or magnitude_bits(t) > precision)
      end)

    loads_other and
      Enum.any?([root | extra], fn out ->
        predicate = out.type == {:u, 8} and out.data.op in @predicates
        float?(out.type) != float_class and not predicate
      end)
  end

  defp magnitude_bits({:s, bits}), do: bits - 1
  defp magnitude_bits({:u, bits}), do: bits

  ## The program: members in dependency order, each operand outside the group an input.

  defp program(group) do
    state = %{nodes: [], node_of: %{}, inputs: []}
    state = emit(group.root, group, state)
    outputs = Enum.map([group.root | group.extra], &state.node_of[&1.data.id])
    %{nodes: Enum.reverse(state.nodes), inputs: Enum.reverse(state.inputs), outputs: outputs}
  end

  defp emit(%T{data: %Expr{id: id}} = t, group, state) do
    cond do
      Map.has_key?(state.node_of, id) -> state
      not Map.has_key?(group.members, id) -> emit_leaf(t, group, state)
      true -> emit_member(t, group, state)
    end
  end

  defp emit_leaf(%T{data: %Expr{id: id, op: :constant, args: [v]}}, group, state),
    do: push(state, id, {"constant", 0, 0, 0, group.type, v})

  # An input read through transposes and broadcasts is read from their operand by a view:
  # they need no launch of their own (one that others read still runs for them).
  defp emit_leaf(%T{data: %Expr{id: id}} = t, _group, state) do
    state = %{state | inputs: [unwrap(t) | state.inputs]}
    push(state, id, {"input", length(state.inputs) - 1, 0, 0, t.type, 0})
  end

  # The tensor under `t`'s transposes and broadcasts, and those in the order they apply
  # (`t` itself where a constant is under them: the group's constants are nodes).
  defp unwrap(t), do: unwrap(t, [], t)

  defp unwrap(%T{data: %Expr{op: :transpose, args: [x, axes]}}, reads, top),
    do: unwrap(x, [{:transpose, axes} | reads], top)

  defp unwrap(%T{data: %Expr{op: :broadcast, args: [x, shape, axes]}}, reads, top),
    do: unwrap(x, [{:broadcast, shape, axes} | reads], top)

  defp unwrap(t, reads, top), do: if(constant?(t), do: {top, []}, else: {t, reads})

  defp emit_member(%T{data: %Expr{id: id, op: :metadata, args: [inner | _]}}, group, state) do
    state = emit(inner, group, state)
    %{state | node_of: Map.put(state.node_of, id, state.node_of[inner.data.id])}
  end

  defp emit_member(%T{data: %Expr{id: id, op: op, args: [x, _opts]}} = t, group, state) when op in @reductions do
    state = emit(x, group, state)
    push(state, id, {Atom.to_string(op), state.node_of[x.data.id], 0, 0, t.type, 0})
  end

  defp emit_member(%T{data: %Expr{id: id, op: op, args: args}} = t, group, state) do
    state = Enum.reduce(args, state, &emit(&1, group, &2))

    case Enum.map(args, &state.node_of[&1.data.id]) do
      [a] when op == :as_type -> push(state, id, {"as_type", a, 0, 0, t.type, 0})
      [a] -> push(state, id, {Atom.to_string(op), a, 0, 0, t.type, 0})
      [a, b] -> push(state, id, {Atom.to_string(op), a, b, 0, t.type, 0})
      [p, a, b] -> push(state, id, {"select", p, a, b, t.type, 0})
    end
  end

  defp push(state, id, node) do
    index = length(state.nodes)
    %{state | nodes: [node | state.nodes], node_of: Map.put(state.node_of, id, index)}
  end

  ## The block.

  # The node that replaces a group's root (its block, or the block's first element) or
  # one of its extra outputs (the block's element `k`). A block of several outputs is
  # built once, for whichever of them the rewrite meets first.
  defp generated_block(t, {:output_of, root_id, k}, cache, rebuild, groups) do
    {block, cache} = block_of(groups[root_id], root_id, cache, rebuild)
    {element(t, block, k), cache}
  end

  defp generated_block(root, %{extra: []} = group, cache, rebuild, _groups) do
    {block, cache} = block_of(group, root.data.id, cache, rebuild)
    {block, cache}
  end

  defp generated_block(root, group, cache, rebuild, _groups) do
    {block, cache} = block_of(group, root.data.id, cache, rebuild)
    {element(root, block, 0), cache}
  end

  defp element(t, %T{data: %Expr{context: context}} = block, k),
    do: %{t | data: %Expr{id: Expr.id(), op: :elem, args: [block, k], context: context}}

  # (A block met again while its inputs are rebuilt would wait for itself: the planner
  # rules that out, and the pass leaves the expression as it is if it ever happens.)
  defp block_of(group, root_id, cache, rebuild) do
    case cache do
      %{{__MODULE__, :block, ^root_id} => :building} ->
        throw(:unfusable)

      %{{__MODULE__, :block, ^root_id} => block} ->
        {block, cache}

      %{} ->
        cache = Map.put(cache, {__MODULE__, :block, root_id}, :building)
        {block, cache} = build_block(group, cache, rebuild)
        {block, Map.put(cache, {__MODULE__, :block, root_id}, block)}
    end
  end

  defp build_block(%{root: root} = group, cache, rebuild) do
    program = group.program
    {inputs, cache} = Enum.map_reduce(program.inputs, cache, fn {t, _reads}, cache -> rebuild.(t, cache) end)

    struct = %Generated{
      shape: Tuple.to_list(group.shape),
      reduce_axes: group.reduce_axes,
      output_shapes: Enum.map([root | group.extra], & &1.shape),
      views: Enum.map(program.inputs, &view(&1, group.shape)),
      reads: Enum.map(program.inputs, &elem(&1, 1)),
      nodes: program.nodes,
      outputs: program.outputs
    }

    context = root.data.context
    params = Enum.with_index(inputs, fn t, i -> Expr.parameter(t, context, i) end)
    default = Generated.evaluate(struct, params)
    args = [struct, inputs, default, default_fun(length(inputs))]
    expr = %Expr{id: Expr.id(), op: :block, args: args, context: context}

    block =
      case group.extra do
        [] -> %{root | data: expr}
        extra -> %T{shape: {}, type: {:tuple, length(extra) + 1}, names: [], data: expr}
      end

    {block, cache}
  end

  # How the kernel reads input `t` (through `reads`) for each point of `shape`: Nx
  # broadcasting aligns the shapes on the right, and an axis of size 1 (or missing)
  # repeats.
  defp view({%T{shape: base, type: type}, reads}, shape) do
    {own, strides} = Enum.reduce(reads, {Tuple.to_list(base), contiguous(base)}, &read_strides/2)
    pad = tuple_size(shape) - length(own)
    strides = List.duplicate(0, pad) ++ Enum.zip_with(own, strides, fn d, s -> if d == 1, do: 0, else: s end)
    {type, strides, 0}
  end

  defp contiguous(shape) do
    {strides, _} =
      shape
      |> Tuple.to_list()
      |> Enum.reverse()
      |> Enum.map_reduce(1, fn d, step -> {step, step * d} end)

    Enum.reverse(strides)
  end

  # The shape and element strides of a transposed or broadcast tensor.
  defp read_strides({:transpose, axes}, {own, strides}),
    do: {Enum.map(axes, &Enum.at(own, &1)), Enum.map(axes, &Enum.at(strides, &1))}

  defp read_strides({:broadcast, to, axes}, {own, strides}) do
    new =
      for j <- 0..(tuple_size(to) - 1)//1 do
        case Enum.find_index(axes, &(&1 == j)) do
          nil -> 0
          i -> if Enum.at(own, i) == 1, do: 0, else: Enum.at(strides, i)
        end
      end

    {Tuple.to_list(to), new}
  end

  # The block's default implementation (`Nx.Vulkan.Generated.evaluate/2`), of the arity
  # `Nx.block/4` calls it with: the struct and one argument per input.
  for n <- 1..(@max_buffers - 1) do
    vars = Macro.generate_arguments(n, __MODULE__)

    defp default_fun(unquote(n)) do
      fn struct, unquote_splicing(vars) -> Nx.Vulkan.Generated.evaluate(struct, unquote(vars)) end
    end
  end
end
