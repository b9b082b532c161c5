//! The fused-program NIF (Nx.Vulkan.Compiler's fusion groups): slots arrive as
//! `{name, a, b, value}` tuples naming Nx ops.

use super::convert::{dtype, err, NifOut, ScalarTerm};
use super::program::op;
use super::tensor::Ref;
use super::twin::twin_nif;
use crate::error::Error;
use crate::ops::creation::Scalar;
use crate::ops::elementwise::{BinaryOp, UnaryOp};
use crate::ops::fused::{fused, FusedOp, FusedProgram};
use crate::ops::reduce::ReduceOp;

const OP: &str = "fused";

/// One slot: `{"input", k, _, _}`, `{"constant", _, _, value}`, `{"sum" | "reduce_max" |
/// "reduce_min", a, _, _}`, `{unary, a, _, _}` or `{binary, a, b, _}` (Nx op names).
fn slot(name: &str, a: usize, b: usize, value: &ScalarTerm) -> NifOut<FusedOp> {
    let unknown = || err(OP, Error::InvalidArgument(format!("no fused op {name:?}")));
    Ok(match name {
        "input" => FusedOp::Input(a),
        "constant" => FusedOp::Constant(match value.0 {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) => f,
            Scalar::Complex(..) => return Err(unknown()),
        }),
        _ => {
            if let Some(r) = ReduceOp::from_name(name) {
                FusedOp::Reduce(r, a)
            } else if let Some(u) = UnaryOp::from_name(name) {
                FusedOp::Unary(u, a)
            } else if let Some(op) = BinaryOp::from_name(name) {
                FusedOp::Binary(op, a, b)
            } else {
                return Err(unknown());
            }
        }
    })
}

twin_nif! {
    /// Runs a fused program of type `ty` over the domain `shp` (rows: its first `row_axes`
    /// axes) on `inputs`; the result has the domain's shape, or the rows' when `per_row`.
    t_fused_nb / t_fused_dirty => fn t_fused(
        ty: String,
        shp: Vec<usize>,
        row_axes: usize,
        per_row: bool,
        slots: Vec<(String, usize, usize, ScalarTerm)>,
        inputs: Vec<Ref>,
    ) -> NifOut<Ref> {
        let program = FusedProgram {
            dtype: dtype(OP, &ty)?,
            shape: shp,
            row_axes,
            slots: slots
                .iter()
                .map(|(name, a, b, v)| slot(name, *a, *b, v))
                .collect::<NifOut<_>>()?,
            per_row,
        };
        let refs: Vec<&Ref> = inputs.iter().collect();
        op(OP, &refs, move |x| fused(&program, &x.iter().collect::<Vec<_>>()))
    }
}
