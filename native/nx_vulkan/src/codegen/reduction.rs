//! Reductions in generated kernels: one invocation per output point (the domain without
//! the reduced axes) folds each `Reduce` node's values over the reduced axes in order,
//! recomputing the element-wise nodes it reads from the inputs, then computes the nodes
//! of one value per point, stores them, and walks the reduced axes once more for the
//! element-wise outputs. Sums and products accumulate as the unfused reductions do (the
//! library's `acc_*`: double for the f32 class on devices with f64); maxima and minima
//! fold in the class with reduce.comp's `combine` (NaN first, the earlier of ±0).

use super::emit::Emitter;
use super::ir::{Group, Node};
use crate::error::Result;
use crate::ops::layout::contiguous_strides;
use crate::ops::reduce::ReduceOp;
use rspirv::spirv::{LoopControl, StorageClass, Word};
use std::collections::HashMap;

/// The library functions a reduction calls, unspecialised (shaders/codegen/lib.comp).
pub(super) const LIBRARY: [&str; 6] = [
    "identity_of",
    "combine",
    "acc_identity",
    "acc_combine",
    "acc_load",
    "acc_store",
];

/// A reduction's accumulator: a Function variable of the library's accumulator type
/// (`wide`: a sum or product, through `acc_*`) or of the class's.
pub(super) struct Accumulator {
    var: Word,
    ty: Word,
    wide: bool,
}

/// The blocks of a counted loop being emitted.
struct Loop {
    header: Word,
    cont: Word,
    merge: Word,
    counter: Word,
    next: Word,
}

impl Emitter<'_> {
    /// One accumulator per `Reduce` node, declared where `main`'s variables must be.
    pub(super) fn accumulators(&mut self, group: &Group) -> Result<HashMap<usize, Accumulator>> {
        let mut accumulators = HashMap::new();
        for (j, node) in group.nodes.iter().enumerate() {
            if let Node::Reduce(op, ..) = *node {
                let wide = matches!(op, ReduceOp::Sum | ReduceOp::Product);
                let ty = if wide {
                    self.specialized["acc_identity"].returns
                } else {
                    self.t
                };
                let ptr = self.b.type_pointer(None, StorageClass::Function, ty);
                let var = self.b.variable(ptr, None, StorageClass::Function, None);
                accumulators.insert(j, Accumulator { var, ty, wide });
            }
        }
        Ok(accumulators)
    }

    /// The body of a reduction group at output point `o`.
    pub(super) fn output_point(
        &mut self,
        group: &Group,
        o: Word,
        addrs: &[Word],
        constants: &HashMap<usize, Word>,
        accumulators: &HashMap<usize, Accumulator>,
    ) -> Result<()> {
        let rank = group.shape.len();
        let (reduced, kept): (Vec<usize>, Vec<usize>) =
            (0..rank).partition(|a| group.reduce_axes.contains(a));
        let dims = |axes: &[usize]| axes.iter().map(|&a| group.shape[a]).collect::<Vec<_>>();
        let (kept_dims, reduced_dims) = (dims(&kept), dims(&reduced));
        let folded: usize = reduced_dims.iter().product();
        let element_strides: Vec<isize> = contiguous_strides(&group.shape);

        // Where this point's elements start, in each input and in the domain.
        let at = self.coordinates(o, &kept_dims)?;
        let mut bases = Vec::with_capacity(group.inputs.len() + 1);
        for view in &group.inputs {
            let strides: Vec<isize> = kept.iter().map(|&a| view.strides[a]).collect();
            bases.push(self.linear(view.offset, &at, &strides)?);
        }
        let strides: Vec<isize> = kept.iter().map(|&a| element_strides[a]).collect();
        let element_base = self.linear(0, &at, &strides)?;
        let reduced_strides =
            |strides: &[isize]| -> Vec<isize> { reduced.iter().map(|&a| strides[a]).collect() };

        let per = group.per_output();
        let mut point: HashMap<usize, Word> = constants.clone();
        self.per_point_nodes(group, &per, &mut point, addrs)?;
        for (j, node) in group.nodes.iter().enumerate() {
            let Node::Reduce(op, a, _) = *node else {
                continue;
            };
            let acc = &accumulators[&j];
            let (var, ty, wide) = (acc.var, acc.ty, acc.wide);
            let code = self.u32(op as u32);
            let identity = self.call(if wide { "acc_identity" } else { "identity_of" }, &[code])?;
            self.b.store(var, identity, None, [])?;

            let walk = self.begin_loop(folded)?;
            let values = self.element_values(
                group,
                &per,
                &[a],
                &point,
                walk.counter,
                &reduced_dims,
                &bases,
                addrs,
                &reduced_strides,
            )?;
            let sum = self.b.load(ty, None, var, None, [])?;
            let next = if wide {
                let x = self.call("acc_load", &[values[&a]])?;
                self.call("acc_combine", &[code, sum, x])?
            } else {
                self.call("combine", &[code, sum, values[&a]])?
            };
            self.b.store(var, next, None, [])?;
            self.end_loop(walk)?;

            let total = self.b.load(ty, None, var, None, [])?;
            let value = if wide {
                self.call("acc_store", &[total])?
            } else {
                total
            };
            point.insert(j, value);
            self.per_point_nodes(group, &per, &mut point, addrs)?;
        }

        let first_output = group.inputs.len();
        let mut element_outputs = Vec::new();
        for (k, &node) in group.outputs.iter().enumerate() {
            if per[node] {
                self.store(group, node, addrs[first_output + k], o, point[&node])?;
            } else {
                element_outputs.push((k, node));
            }
        }
        if element_outputs.is_empty() {
            return Ok(());
        }
        let walk = self.begin_loop(folded)?;
        let targets: Vec<usize> = element_outputs.iter().map(|&(_, n)| n).collect();
        let values = self.element_values(
            group,
            &per,
            &targets,
            &point,
            walk.counter,
            &reduced_dims,
            &bases,
            addrs,
            &reduced_strides,
        )?;
        let along = self.coordinates(walk.counter, &reduced_dims)?;
        let offsets = reduced_strides(&element_strides);
        let index = self.linear_from(element_base, &along, &offsets)?;
        for (k, node) in element_outputs {
            self.store(group, node, addrs[first_output + k], index, values[&node])?;
        }
        self.end_loop(walk)
    }

    /// Computes the nodes of one value per point whose operands are all known.
    fn per_point_nodes(
        &mut self,
        group: &Group,
        per: &[bool],
        point: &mut HashMap<usize, Word>,
        addrs: &[Word],
    ) -> Result<()> {
        for (j, node) in group.nodes.iter().enumerate() {
            let ready = per[j]
                && !point.contains_key(&j)
                && !matches!(node, Node::Reduce(..))
                && node.operands().iter().all(|k| point.contains_key(k));
            if ready {
                let v = self.node_value(group, j, point, addrs, None)?;
                point.insert(j, v);
            }
        }
        Ok(())
    }

    /// The element-wise nodes that `targets` read (and they), at step `step` of the walk
    /// along the reduced axes, the per-point values taken from `point`.
    #[allow(clippy::too_many_arguments)]
    fn element_values(
        &mut self,
        group: &Group,
        per: &[bool],
        targets: &[usize],
        point: &HashMap<usize, Word>,
        step: Word,
        reduced_dims: &[usize],
        bases: &[Word],
        addrs: &[Word],
        reduced_strides: &dyn Fn(&[isize]) -> Vec<isize>,
    ) -> Result<HashMap<usize, Word>> {
        let mut needed = vec![false; group.nodes.len()];
        let mut todo: Vec<usize> = targets.iter().copied().filter(|&t| !per[t]).collect();
        while let Some(j) = todo.pop() {
            if !needed[j] {
                needed[j] = true;
                todo.extend(group.nodes[j].operands().into_iter().filter(|&k| !per[k]));
            }
        }
        let along = self.coordinates(step, reduced_dims)?;
        let mut values = point.clone();
        for j in (0..group.nodes.len()).filter(|&j| needed[j]) {
            let index = match group.nodes[j] {
                Node::Input(k) => {
                    let strides = reduced_strides(&group.inputs[k].strides);
                    Some(self.linear_from(bases[k], &along, &strides)?)
                }
                _ => None,
            };
            let v = self.node_value(group, j, &values, addrs, index)?;
            values.insert(j, v);
        }
        Ok(values)
    }

    /// The coordinates of a row-major index `x` over `dims` (32-bit).
    fn coordinates(&mut self, x: Word, dims: &[usize]) -> Result<Vec<Word>> {
        let uint = self.uint;
        let mut coords = vec![0; dims.len()];
        let mut rest = x;
        for (d, &dim) in dims.iter().enumerate().rev() {
            if dim == 1 {
                coords[d] = self.u32(0);
                continue;
            }
            let first = dims[..d].iter().all(|&e| e == 1);
            let dim_c = self.u32(dim as u32);
            coords[d] = if first {
                rest
            } else {
                self.b.u_mod(uint, None, rest, dim_c)?
            };
            if !first {
                rest = self.b.u_div(uint, None, rest, dim_c)?;
            }
        }
        Ok(coords)
    }

    /// `offset + sum(coords[d] * strides[d])`, wrapping in 32 bits as the static kernels.
    fn linear(&mut self, offset: usize, coords: &[Word], strides: &[isize]) -> Result<Word> {
        let base = self.u32(offset as u32);
        self.linear_from(base, coords, strides)
    }

    fn linear_from(&mut self, base: Word, coords: &[Word], strides: &[isize]) -> Result<Word> {
        let uint = self.uint;
        let mut acc = base;
        for (&c, &s) in coords.iter().zip(strides) {
            if s != 0 {
                let s = self.u32(s as i32 as u32);
                let term = self.b.i_mul(uint, None, c, s)?;
                acc = self.b.i_add(uint, None, acc, term)?;
            }
        }
        Ok(acc)
    }

    /// Starts `for (counter = 0; counter < count; counter++)`: the body follows.
    fn begin_loop(&mut self, count: usize) -> Result<Loop> {
        let (uint, bool_t) = (self.uint, self.b.type_bool());
        let (header, body, cont, merge) = (self.b.id(), self.b.id(), self.b.id(), self.b.id());
        let (counter, next) = (self.b.id(), self.b.id());
        let entry = self.current_label();
        let (zero, count) = (self.u32(0), self.u32(count as u32));
        self.b.branch(header)?;
        self.b.begin_block(Some(header))?;
        self.b
            .phi(uint, Some(counter), [(zero, entry), (next, cont)])?;
        let more = self.b.u_less_than(bool_t, None, counter, count)?;
        self.b.loop_merge(merge, cont, LoopControl::NONE, [])?;
        self.b.branch_conditional(more, body, merge, [])?;
        self.b.begin_block(Some(body))?;
        Ok(Loop {
            header,
            cont,
            merge,
            counter,
            next,
        })
    }

    /// Ends the loop's body: the code after it follows.
    fn end_loop(&mut self, l: Loop) -> Result<()> {
        let uint = self.uint;
        self.b.branch(l.cont)?;
        self.b.begin_block(Some(l.cont))?;
        let one = self.u32(1);
        self.b.i_add(uint, Some(l.next), l.counter, one)?;
        self.b.branch(l.header)?;
        self.b.begin_block(Some(l.merge))?;
        Ok(())
    }
}
