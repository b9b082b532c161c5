//! The IR of a generated kernel: element-wise ops over one domain, as SSA nodes that read
//! the group's inputs through views and each other, computing in one class.
//!
//! A group computes what the unfused ops compute only where keeping a value in a
//! register equals storing it and loading it back. [`Group::check`] accepts a group where
//! it does: every node computes in the class its unfused kernel would (`ops::elementwise`
//! decides, by the node's operand and result types, and would not move to f64 for wide
//! integer operands), that kernel is the plain unary or binary one (not a math library
//! module), and every node that another node reads has a result type that stores the
//! class exactly (f32 for the f32 class, s64 for i64, ...) or holds 0/1 (a comparison's
//! u8). Inputs of any real type load as their kernels load them, and outputs of any type
//! store as theirs store: a conversion (`as_type`, the identity op to another type) at
//! either end is generated too.

use crate::dtype::{Compute, DType};
use crate::error::Result;
use crate::kernels::Kernel;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::reduce::ReduceOp;
use crate::tensor::numel;

/// Most inputs plus outputs of a group: one address each in the push constants.
pub const MAX_BUFFERS: usize = 12;
/// Most nodes of a group.
pub const MAX_NODES: usize = 128;
/// Most elements one output point of a reduction folds: each is folded by one
/// invocation, in order (longer rows go to the reduction kernels).
pub const MAX_REDUCED: usize = 1 << 16;
/// Most push words a group's constants take (one each in a 32-bit class, two in a 64-bit
/// one): they travel with each launch (shaders/codegen/lib.comp's `words`), so that one
/// pipeline serves every value and no driver folds a constant into the ops around it.
pub const MAX_CONSTANT_WORDS: usize = 7;

/// How a kernel reads an input: element `offset + sum(coordinate[d] * strides[d])` of its
/// buffer for each point of the domain. Zero strides broadcast.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct View {
    pub dtype: DType,
    pub strides: Vec<isize>,
    pub offset: usize,
}

/// One value of the group, computed at every point of the domain.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Node {
    /// Input `k`, read through its view.
    Input(usize),
    /// A unary op of an earlier node, with the type Nx gives its result.
    Unary(UnaryOp, usize, DType),
    /// A binary op of two earlier nodes, with the type Nx gives its result.
    Binary(BinaryOp, usize, usize, DType),
    /// A number of this type, as the little-endian bits of its storage (a constant
    /// operand, which Nx gives the other operand's type): a push word (two in a 64-bit
    /// class) of each launch.
    Constant(u64, DType),
    /// `select(pred, on_true, on_false)`: the second node where the first (u8) is not 0,
    /// else the third, of this type.
    Select(usize, usize, usize, DType),
    /// A sum, product, max or min of an earlier node over the group's reduced axes, of
    /// this type: one value per output point (see [`Group::reduce_axes`]).
    Reduce(ReduceOp, usize, DType),
}

impl Node {
    /// The earlier nodes this one reads.
    pub fn operands(&self) -> Vec<usize> {
        match *self {
            Node::Unary(_, a, _) | Node::Reduce(_, a, _) => vec![a],
            Node::Binary(_, a, b, _) => vec![a, b],
            Node::Select(p, a, b, _) => vec![p, a, b],
            Node::Input(_) | Node::Constant(..) => vec![],
        }
    }
}

/// A generated kernel: inputs, nodes in order, and the nodes stored as outputs.
///
/// Without `reduce_axes` every node has a value at each point of the domain `shape`,
/// and each output is a contiguous tensor of that shape. With them (sorted axes of the
/// domain), the group has `Reduce` nodes, which fold those axes: they and the nodes that
/// read only them and constants have one value per output point (the domain without
/// the reduced axes; [`Group::per_output`]), and an output of such a node is a
/// contiguous tensor of the kept axes' shape. One invocation computes each output point,
/// folding in order.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Group {
    pub shape: Vec<usize>,
    pub reduce_axes: Vec<usize>,
    pub inputs: Vec<View>,
    pub nodes: Vec<Node>,
    pub outputs: Vec<usize>,
}

impl Group {
    /// The group without its constants' values: the kernel is the same for every value
    /// (they are push words), so pipelines are keyed by this.
    pub fn kernel_key(&self) -> Group {
        let mut key = self.clone();
        for node in &mut key.nodes {
            if let Node::Constant(bits, _) = node {
                *bits = 0;
            }
        }
        key
    }

    /// The push words of the constants in `class`, in node order: each value as the
    /// class's storage holds it (a u8 converted exactly), low word first.
    pub fn constant_words(&self, class: Compute) -> Vec<u32> {
        let mut words = Vec::new();
        for node in &self.nodes {
            if let Node::Constant(bits, t) = *node {
                let v = constant_bits(class, bits, t);
                words.push(v as u32);
                if class.is_64() {
                    words.push((v >> 32) as u32);
                }
            }
        }
        words
    }

    /// The type of node `i`'s values.
    pub fn dtype(&self, i: usize) -> DType {
        match self.nodes[i] {
            Node::Input(k) => self.inputs[k].dtype,
            Node::Unary(_, _, t)
            | Node::Binary(_, _, _, t)
            | Node::Constant(_, t)
            | Node::Select(_, _, _, t)
            | Node::Reduce(_, _, t) => t,
        }
    }

    /// Which nodes have one value per output point rather than one per element: the
    /// reductions, constants, and nodes that read only such nodes.
    pub fn per_output(&self) -> Vec<bool> {
        let mut per = Vec::with_capacity(self.nodes.len());
        for node in &self.nodes {
            let p = match node {
                Node::Input(_) => false,
                Node::Constant(..) | Node::Reduce(..) => true,
                n => n
                    .operands()
                    .iter()
                    .all(|&j| per.get(j).copied().unwrap_or(false)),
            };
            per.push(p);
        }
        per
    }

    /// The shape of an output point: the domain without the reduced axes.
    pub fn kept_shape(&self) -> Vec<usize> {
        (0..self.shape.len())
            .filter(|a| !self.reduce_axes.contains(a))
            .map(|a| self.shape[a])
            .collect()
    }

    /// The shape of output `j`'s tensor: the kept shape for a per-output-point node of a
    /// reduction, the domain otherwise.
    pub fn output_shape(&self, j: usize) -> Vec<usize> {
        if !self.reduce_axes.is_empty() && self.per_output()[self.outputs[j]] {
            self.kept_shape()
        } else {
            self.shape.clone()
        }
    }

    /// Checks the reduced axes and the reductions' places: sorted axes of the domain,
    /// folding at most [`MAX_REDUCED`] elements per point, and reductions (of values that
    /// vary along them) exactly where there are reduced axes.
    fn check_reduction(&self) -> Result<()> {
        let rank = self.shape.len();
        let sorted = self.reduce_axes.windows(2).all(|w| w[0] < w[1]);
        if !sorted || self.reduce_axes.iter().any(|&a| a >= rank) {
            return Err(crate::invalid!(
                "reduced axes {:?} are not sorted axes of a domain of rank {rank}",
                self.reduce_axes
            ));
        }
        let folded: usize = self.reduce_axes.iter().map(|&a| self.shape[a]).product();
        let reductions = self
            .nodes
            .iter()
            .filter(|n| matches!(n, Node::Reduce(..)))
            .count();
        if self.reduce_axes.is_empty() {
            return match reductions {
                0 => Ok(()),
                _ => Err(crate::invalid!(
                    "a group with reductions needs the axes they reduce"
                )),
            };
        }
        if reductions == 0 {
            return Err(crate::invalid!(
                "a group reducing axes {:?} has no reduction",
                self.reduce_axes
            ));
        }
        if folded == 0 || folded > MAX_REDUCED {
            return Err(crate::unsupported!(
                "a generated reduction folds 1 to {MAX_REDUCED} elements per point, not \
                 {folded}"
            ));
        }
        let per = self.per_output();
        for (i, node) in self.nodes.iter().enumerate() {
            if let Node::Reduce(_, a, _) = *node {
                if a < i && per[a] {
                    return Err(crate::unsupported!(
                        "node {i} reduces node {a}, which has one value per output point"
                    ));
                }
            }
        }
        Ok(())
    }

    /// The class every node computes in, if the group computes what its ops unfused do
    /// (see the module's doc); an error naming the first node that does not otherwise.
    pub fn check(&self) -> Result<Compute> {
        let n = numel(&self.shape)?;
        if self.inputs.len() + self.outputs.len() > MAX_BUFFERS {
            return Err(crate::unsupported!(
                "a generated kernel takes at most {MAX_BUFFERS} inputs and outputs, not {}",
                self.inputs.len() + self.outputs.len()
            ));
        }
        if self.nodes.is_empty() || self.nodes.len() > MAX_NODES || self.outputs.is_empty() {
            return Err(crate::invalid!(
                "a generated kernel needs 1 to {MAX_NODES} nodes and an output, not {} and {}",
                self.nodes.len(),
                self.outputs.len()
            ));
        }
        if n > i32::MAX as usize {
            return Err(crate::unsupported!(
                "a generated kernel covers at most 2^31 - 1 elements, not {n}"
            ));
        }
        self.check_reduction()?;
        for (k, v) in self.inputs.iter().enumerate() {
            if v.strides.len() != self.shape.len() {
                return Err(crate::invalid!(
                    "input {k} has {} strides for a domain of rank {}",
                    v.strides.len(),
                    self.shape.len()
                ));
            }
        }
        if let Some(t) = (0..self.nodes.len())
            .map(|i| self.dtype(i))
            .find(|t| t.is_complex())
        {
            return Err(crate::unsupported!(
                "{} values are not generated yet",
                t.name()
            ));
        }
        // Which nodes another node reads: their values must be what a store and a load
        // would make of them.
        let mut read = vec![false; self.nodes.len()];
        let last = self.nodes.len() - 1;
        for node in &self.nodes {
            // (An operand past the end is reported below.)
            for j in node.operands() {
                read[j.min(last)] = true;
            }
        }
        let mut class = None;
        for (i, node) in self.nodes.iter().enumerate() {
            let earlier = |j: usize| {
                if j < i {
                    Ok(())
                } else {
                    Err(crate::invalid!(
                        "node {i} reads node {j}, which is not earlier"
                    ))
                }
            };
            let node_class = match *node {
                Node::Input(k) => {
                    if k >= self.inputs.len() {
                        return Err(crate::invalid!(
                            "node {i} reads input {k} of {}",
                            self.inputs.len()
                        ));
                    }
                    continue;
                }
                Node::Unary(op, a, out) => {
                    earlier(a)?;
                    let t = self.dtype(a);
                    let c = op.class(t, out);
                    // A float function of integers: `unary` computes it in f64 where the
                    // integers may not fit the float type (`exact_float`).
                    let widened = op != UnaryOp::Identity && may_widen(out, &[t]);
                    // The math library's exp runs in the f64 class and in f32 through f64
                    // (shaders/codegen/lib.comp's `math_exp`, the unfused kernel's code).
                    let math = super::math::is_math(op, c);
                    if widened || !op.supported(c) || op.kernel(c) != Kernel::Unary(c) && !math {
                        return Err(unfusable(i, op.name(), c));
                    }
                    exact_result(i, read[i], out, c, op.is_predicate())?;
                    c
                }
                Node::Constant(_, t) => {
                    if t != DType::U8 && t != t.compute().storage() {
                        return Err(crate::unsupported!(
                            "node {i} is a {} constant, which no class holds exactly",
                            t.name()
                        ));
                    }
                    continue;
                }
                Node::Select(p, a, b, out) => {
                    earlier(p)?;
                    earlier(a)?;
                    earlier(b)?;
                    let (pt, at, bt) = (self.dtype(p), self.dtype(a), self.dtype(b));
                    if pt != DType::U8 || at != out || bt != out || out != out.compute().storage() {
                        return Err(crate::unsupported!(
                            "node {i} selects {} and {} by {} into {}: generated selects take \
                             a u8 predicate and values of the result's type",
                            at.name(),
                            bt.name(),
                            pt.name(),
                            out.name()
                        ));
                    }
                    out.compute()
                }
                Node::Reduce(op, a, out) => {
                    earlier(a)?;
                    // As `ops::reduce::reduce` would fold it: the value, of the class's
                    // storage type, folded in its class (sums and products in the
                    // accumulator the library gives the class), the result of that type.
                    let t = self.dtype(a);
                    let c = t.compute();
                    let foldable = matches!(
                        op,
                        ReduceOp::Sum | ReduceOp::Product | ReduceOp::Max | ReduceOp::Min
                    );
                    if !foldable || t != c.storage() || out != t {
                        return Err(crate::unsupported!(
                            "node {i} folds {} into {} by {op:?}: generated reductions fold \
                             sums, products, maxima and minima of their class's type into it",
                            t.name(),
                            out.name()
                        ));
                    }
                    c
                }
                Node::Binary(op, a, b, out) => {
                    earlier(a)?;
                    earlier(b)?;
                    let (ta, tb) = (self.dtype(a), self.dtype(b));
                    let (c, rounds_to) = op.class(ta, tb, out);
                    // binary.comp orders and divides a u64 at or above 2^63 mixed with a
                    // signed operand by its own value (`big_apply`), which is not generated.
                    let big_u64 = c == Compute::I64 && (ta == DType::U64 || tb == DType::U64);
                    if big_u64
                        || may_widen(rounds_to, &[ta, tb])
                        || !op.supported(c)
                        || op.kernel(c) != Kernel::Binary(c)
                    {
                        return Err(unfusable(i, op.name(), c));
                    }
                    exact_result(i, read[i], out, c, op.is_predicate())?;
                    c
                }
            };
            match class {
                None => class = Some(node_class),
                Some(c) if c == node_class => {}
                Some(c) => {
                    return Err(crate::unsupported!(
                        "node {i} computes in {node_class:?}, the group in {c:?}"
                    ))
                }
            }
        }
        // A group of inputs and constants alone copies them: in the class of the first.
        let class = class.unwrap_or_else(|| self.dtype(0).compute());
        let words = self.constant_words(class).len();
        if words > MAX_CONSTANT_WORDS {
            return Err(crate::unsupported!(
                "a generated kernel's constants take at most {MAX_CONSTANT_WORDS} push words, \
                 not {words}"
            ));
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if let Node::Constant(_, t) = *node {
                if t != class.storage() && t != DType::U8 {
                    return Err(crate::unsupported!(
                        "node {i} is a {} constant in a group computing in {class:?}",
                        t.name()
                    ));
                }
            }
        }
        for &o in &self.outputs {
            if o >= self.nodes.len() {
                return Err(crate::invalid!("output node {o} of {}", self.nodes.len()));
            }
            // An input stored as it is: loaded into the class, it must come back whole.
            let t = self.dtype(o);
            if matches!(self.nodes[o], Node::Input(_)) && t != class.storage() && t != DType::U8 {
                return Err(crate::unsupported!(
                    "output {o} is a {} input, which a group computing in {class:?} does not \
                     hold exactly",
                    t.name()
                ));
            }
        }
        if matches!(class, Compute::C64 | Compute::C128) {
            return Err(crate::unsupported!("complex values are not generated yet"));
        }
        self.check_round_trips(class)?;
        Ok(class)
    }

    /// Refuses a conversion round trip: an input of the other kind than the class (an
    /// integer that the class's float rounds, or a float into an integer class) in a group
    /// that stores a converted result of that other kind (a predicate's 0/1 excepted).
    /// Drivers fold the two conversions of one kernel (Mesa: `f2i(i2f(x))` to `x`), which
    /// changes out-of-range values; the unfused kernels store between them.
    fn check_round_trips(&self, class: Compute) -> Result<()> {
        let float_class = matches!(class, Compute::F32 | Compute::F64);
        let other_kind = |t: DType| t.is_float() != float_class;
        // (Integers the class's float holds exactly come back whole either way.)
        let rounds =
            |t: DType| !float_class || t.magnitude_bits() > class.storage().precision_bits();
        let loads_other = self
            .inputs
            .iter()
            .any(|v| other_kind(v.dtype) && rounds(v.dtype));
        let predicate = |o: usize| match self.nodes[o] {
            Node::Unary(op, ..) => op.is_predicate(),
            Node::Binary(op, ..) => op.is_predicate(),
            _ => false,
        };
        match self
            .outputs
            .iter()
            .find(|&&o| other_kind(self.dtype(o)) && !predicate(o))
        {
            Some(&o) if loads_other => Err(crate::unsupported!(
                "output {o} converts a {class:?} value to {} in a group that loads {} inputs: \
                 a conversion round trip is not generated",
                self.dtype(o).name(),
                if float_class { "integer" } else { "float" }
            )),
            _ => Ok(()),
        }
    }
}

/// A constant of type `dtype` (the little-endian `bits` of its storage) as `class`'s
/// storage holds it: the class's own storage type as it is, a u8 converted (exactly).
pub fn constant_bits(class: Compute, bits: u64, dtype: DType) -> u64 {
    if dtype != DType::U8 {
        return bits;
    }
    let v = bits & 0xFF;
    match class {
        Compute::F32 => (v as f32).to_bits() as u64,
        Compute::F64 => (v as f64).to_bits(),
        _ => v,
    }
}

fn unfusable(i: usize, op: &str, c: Compute) -> crate::error::Error {
    crate::unsupported!("node {i} ({op} in {c:?}) runs a kernel that is not generated yet")
}

/// Whether `ops::exact_float` may move an op rounding to `float` from f32 to f64: an
/// integer operand whose type may hold values the float type does not (its values
/// decide, which a kernel generated ahead of them cannot know).
fn may_widen(float: DType, operands: &[DType]) -> bool {
    float.is_float()
        && operands
            .iter()
            .any(|t| t.is_int() && t.magnitude_bits() > float.precision_bits())
}

/// Whether node `i`'s result, of type `out` in class `c`, stays what a store and a load
/// would make of it, where another node reads it (`read`): a node only stored rounds
/// there, as its unfused kernel does.
fn exact_result(i: usize, read: bool, out: DType, c: Compute, predicate: bool) -> Result<()> {
    if !read || out == c.storage() || predicate && out == DType::U8 {
        Ok(())
    } else {
        Err(crate::unsupported!(
            "node {i} rounds its {c:?} result to {}: generated kernels keep values in {c:?}",
            out.name()
        ))
    }
}
