//! The generated-kernel NIF (Nx.Vulkan.Compiler's element-wise groups, `Nx.Vulkan.Generated`):
//! a group arrives as its domain, its input views and its nodes, each a
//! `{name, a, b, c, type, value}` tuple naming an Nx op (see [`node`]).

use super::convert::{dtype, err, NifOut, ScalarTerm};
use super::program::ops;
use super::tensor::Ref;
use super::twin::twin_nif;
use crate::codegen::{self, Group, Node, View};
use crate::error::Error;
use crate::ops::creation::scalar_bytes;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::reduce::ReduceOp;

const OP: &str = "generated";

/// One node: `{"input", k, _, _, type, _}`, `{"constant", _, _, _, type, value}`,
/// `{"select", pred, on_true, on_false, type, _}`, `{"as_type", a, _, _, type, _}`,
/// `{unary, a, _, _, type, _}`, `{binary, a, b, _, type, _}` or `{reduction, a, _, _,
/// type, _}` (`sum`, `product`, `reduce_max`, `reduce_min` over the group's reduced axes)
/// (Nx op names; `type` is the node's result type).
fn node(name: &str, a: usize, b: usize, c: usize, ty: &str, value: &ScalarTerm) -> NifOut<Node> {
    let t = dtype(OP, ty)?;
    Ok(match name {
        "input" => Node::Input(a),
        "constant" => {
            let bytes = scalar_bytes(value.0, t);
            let mut bits = [0u8; 8];
            let n = bytes.len().min(8);
            bits[..n].copy_from_slice(&bytes[..n]);
            Node::Constant(u64::from_le_bytes(bits), t)
        }
        "select" => Node::Select(a, b, c, t),
        // Nx.as_type: the identity op to another type, as `ops::elementwise::as_type`.
        "as_type" => Node::Unary(UnaryOp::Identity, a, t),
        _ => {
            if let Some(u) = UnaryOp::from_name(name) {
                Node::Unary(u, a, t)
            } else if let Some(op) = BinaryOp::from_name(name) {
                Node::Binary(op, a, b, t)
            } else if let Some(op) = ReduceOp::from_name(name) {
                Node::Reduce(op, a, t)
            } else {
                return Err(err(
                    OP,
                    Error::InvalidArgument(format!("no generated op {name:?}")),
                ));
            }
        }
    })
}

type NodeTerm = (String, usize, usize, usize, String, ScalarTerm);

twin_nif! {
    /// Runs a generated kernel over the domain `shp` on `inputs`, read through `views`
    /// (`{type, strides, offset}` each), its reductions folding `reduce_axes`: the values
    /// of the nodes `outputs`, one tensor each (of the domain's shape, or of the kept
    /// axes' for a value per output point), in one launch.
    t_generated_nb / t_generated_dirty => fn t_generated(
        shp: Vec<usize>,
        reduce_axes: Vec<usize>,
        views: Vec<(String, Vec<isize>, usize)>,
        nodes: Vec<NodeTerm>,
        outputs: Vec<usize>,
        inputs: Vec<Ref>,
    ) -> NifOut<Vec<Ref>> {
        let group = Group {
            shape: shp,
            reduce_axes,
            inputs: views
                .iter()
                .map(|(ty, strides, offset)| {
                    Ok(View { dtype: dtype(OP, ty)?, strides: strides.clone(), offset: *offset })
                })
                .collect::<NifOut<_>>()?,
            nodes: nodes
                .iter()
                .map(|(name, a, b, c, ty, v)| node(name, *a, *b, *c, ty, v))
                .collect::<NifOut<_>>()?,
            outputs,
        };
        // Refused groups say why before any input is touched.
        if let Err(e) = group.check() {
            codegen::note_refused();
            return Err(err(OP, e));
        }
        let refs: Vec<&Ref> = inputs.iter().collect();
        ops(
            OP,
            &refs,
            std::sync::Arc::new(move |x| codegen::run(&group, &x.iter().collect::<Vec<_>>())),
        )
    }
}
