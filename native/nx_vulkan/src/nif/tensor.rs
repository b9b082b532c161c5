//! Tensor NIFs. A tensor crosses the boundary as a resource reference; Elixir keeps the
//! shape and type in its `Nx.Tensor` and passes the output shape and type Nx computed.

use super::convert::{dtype, err, wrap, NifOut, ScalarTerm};
use super::program::op;
use super::twin::{attempt, twin_nif, Attempt};
use crate::error::Error;
use crate::ops::{
    complex, conv, creation, dot, elementwise, indexing, reduce, scatter, shape, sort, triangular,
    window,
};
use crate::tensor::Tensor;
use rustler::{Binary, Env, OwnedBinary, ResourceArc};
use std::sync::Mutex;

/// A tensor held by the BEAM. `None` once explicitly deallocated.
pub struct TensorRes(Mutex<Option<Tensor>>);

#[rustler::resource_impl]
impl rustler::Resource for TensorRes {}

pub(super) type Ref = ResourceArc<TensorRes>;

pub(super) fn new_ref(t: Tensor) -> Ref {
    ResourceArc::new(TensorRes(Mutex::new(Some(t))))
}

/// The engine tensor behind a reference, for a call that is not a recordable op (a read
/// of its data, a chain): a recording of the caller's ops can then not be replayed.
pub(super) fn get(op: &str, r: &Ref) -> NifOut<Tensor> {
    super::program::spoil(op, "reads a tensor");
    get_unrecorded(op, r)
}

/// The engine tensor behind a reference, or an error if it was deallocated.
pub(super) fn get_unrecorded(op: &str, r: &Ref) -> NifOut<Tensor> {
    r.0.lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone()
        .ok_or_else(|| {
            err(
                op,
                Error::InvalidArgument("the tensor was deallocated".into()),
            )
        })
}

twin_nif! {
    /// Uploads a binary as a tensor of `shape` and `type`.
    t_from_binary_nb / t_from_binary_dirty => fn t_from_binary(data: Binary, shp: Vec<usize>, ty: String) -> NifOut<Ref> {
        let t = dtype("from_binary", &ty)?;
        super::program::spoil("from_binary", "uploads host data");
        wrap("from_binary", Tensor::from_binary(&shp, t, data.as_slice())).map(new_ref)
    }
}

/// An uninitialised byte buffer (`Nx.Vulkan.NativeV.buf_alloc/1`).
#[rustler::nif(schedule = "DirtyCpu")]
fn t_alloc(bytes: usize) -> NifOut<Ref> {
    wrap(
        "buf_alloc",
        Tensor::empty(&[bytes], crate::dtype::DType::U8),
    )
    .map(new_ref)
}

/// The first `limit` bytes (or all) of Nx's binary of a tensor (packed for u2/u4/s2/s4).
/// Waits for the work that writes it.
fn t_to_binary<'a>(env: Env<'a>, r: &Ref, limit: Option<usize>) -> NifOut<Binary<'a>> {
    super::program::enter(env);
    let t = get("to_binary", r)?;
    if t.dtype.is_sub_byte() {
        let packed = wrap("to_binary", t.to_binary(limit))?;
        let mut bin = OwnedBinary::new(packed.len());
        bin.as_mut_slice().copy_from_slice(&packed);
        return Ok(bin.release(env));
    }
    let n = limit.map_or(t.nbytes() as usize, |l| l.min(t.nbytes() as usize));
    let mut bin = OwnedBinary::new(n);
    wrap("to_binary", t.read_into(bin.as_mut_slice()))?;
    Ok(bin.release(env))
}

/// `t_to_binary` on the normal scheduler, or `:would_block` (see [`super::twin`]).
#[rustler::nif]
fn t_to_binary_nb<'a>(env: Env<'a>, r: Ref, limit: Option<usize>) -> Attempt<Binary<'a>> {
    attempt(|| t_to_binary(env, &r, limit))
}

/// `t_to_binary` on a dirty I/O scheduler: it may wait for the GPU.
#[rustler::nif(schedule = "DirtyIo")]
fn t_to_binary_dirty<'a>(env: Env<'a>, r: Ref, limit: Option<usize>) -> NifOut<Binary<'a>> {
    t_to_binary(env, &r, limit)
}

/// Releases the device memory of a tensor now rather than at garbage collection.
#[rustler::nif]
fn t_deallocate(r: Ref) -> bool {
    r.0.lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .is_some()
}

/// Shape and type of the engine tensor (for checks and debugging).
#[rustler::nif]
fn t_info(r: Ref) -> NifOut<(Vec<usize>, String)> {
    let t = get_unrecorded("info", &r)?;
    Ok((t.shape.clone(), t.dtype.name().to_string()))
}

twin_nif! {
    t_constant_nb / t_constant_dirty => fn t_constant(shp: Vec<usize>, ty: String, value: ScalarTerm) -> NifOut<Ref> {
        let t = dtype("constant", &ty)?;
        let v = value.0;
        op("constant", &[], move |_| creation::constant(&shp, t, v))
    }
}

twin_nif! {
    t_iota_nb / t_iota_dirty => fn t_iota(shp: Vec<usize>, ty: String, axis: Option<usize>) -> NifOut<Ref> {
        let t = dtype("iota", &ty)?;
        op("iota", &[], move |_| creation::iota(&shp, t, axis))
    }
}

twin_nif! {
    t_eye_nb / t_eye_dirty => fn t_eye(shp: Vec<usize>, ty: String) -> NifOut<Ref> {
        let t = dtype("eye", &ty)?;
        op("eye", &[], move |_| creation::eye(&shp, t))
    }
}

/// Metadata-only reshape (also serves squeeze).
#[rustler::nif]
fn t_reshape(env: Env<'_>, r: Ref, shp: Vec<usize>) -> NifOut<Ref> {
    super::program::enter(env);
    op("reshape", &[&r], move |x| shape::reshape(&x[0], &shp))
}

twin_nif! {
    t_broadcast_nb / t_broadcast_dirty => fn t_broadcast(r: Ref, shp: Vec<usize>, axes: Vec<usize>) -> NifOut<Ref> {
        op("broadcast", &[&r], move |x| shape::broadcast(&x[0], &shp, &axes))
    }
}

twin_nif! {
    t_transpose_nb / t_transpose_dirty => fn t_transpose(r: Ref, axes: Vec<usize>) -> NifOut<Ref> {
        op("transpose", &[&r], move |x| shape::transpose(&x[0], &axes))
    }
}

twin_nif! {
    t_as_type_nb / t_as_type_dirty => fn t_as_type(r: Ref, ty: String) -> NifOut<Ref> {
        let to = dtype("as_type", &ty)?;
        op("as_type", &[&r], move |x| elementwise::as_type(&x[0], to))
    }
}

twin_nif! {
    t_unary_nb / t_unary_dirty => fn t_unary(op: String, r: Ref, ty: String) -> NifOut<Ref> {
        let u = elementwise::UnaryOp::from_name(&op)
            .ok_or_else(|| err(&op, Error::Unsupported("no such unary op".into())))?;
        let to = dtype(&op, &ty)?;
        super::program::op(&op, &[&r], move |x| elementwise::unary(u, &x[0], to))
    }
}

twin_nif! {
    t_binary_nb / t_binary_dirty => fn t_binary(op: String, a: Ref, b: Ref, shp: Vec<usize>, ty: String) -> NifOut<Ref> {
        let bop = elementwise::BinaryOp::from_name(&op)
            .ok_or_else(|| err(&op, Error::Unsupported("no such binary op".into())))?;
        let to = dtype(&op, &ty)?;
        super::program::op(&op, &[&a, &b], move |x| elementwise::binary(bop, &x[0], &x[1], &shp, to))
    }
}

twin_nif! {
    t_reduce_nb / t_reduce_dirty => fn t_reduce(op: String, r: Ref, axes: Option<Vec<usize>>, keep: bool, ty: String) -> NifOut<Ref> {
        let rop = reduce::ReduceOp::from_name(&op)
            .ok_or_else(|| err(&op, Error::Unsupported("no such reduction".into())))?;
        let to = dtype(&op, &ty)?;
        super::program::op(&op, &[&r], move |x| reduce::reduce(rop, &x[0], axes.as_deref(), keep, to))
    }
}

#[rustler::nif(schedule = "DirtyCpu")]
#[allow(clippy::too_many_arguments)]
fn t_window(
    env: Env<'_>,
    op: String,
    r: Ref,
    dims: Vec<usize>,
    strides: Vec<usize>,
    padding: Vec<(i64, i64)>,
    dilations: Vec<usize>,
    ty: String,
) -> NifOut<Ref> {
    let rop = match op.as_str() {
        "window_sum" => reduce::ReduceOp::Sum,
        "window_product" => reduce::ReduceOp::Product,
        "window_max" => reduce::ReduceOp::Max,
        "window_min" => reduce::ReduceOp::Min,
        _ => {
            return Err(err(
                &op,
                Error::Unsupported("no such window reduction".into()),
            ))
        }
    };
    super::program::enter(env);
    let to = dtype(&op, &ty)?;
    let spec = window::WindowSpec {
        dims,
        strides,
        padding: padding
            .iter()
            .map(|&(lo, hi)| (lo as isize, hi as isize))
            .collect(),
        dilations,
    };
    super::program::op(&op, &[&r], move |x| {
        window::window_reduce(rop, &x[0], &spec, to)
    })
}

#[rustler::nif(schedule = "DirtyCpu")]
#[allow(clippy::too_many_arguments)]
fn t_window_scatter(
    env: Env<'_>,
    is_min: bool,
    r: Ref,
    source: Ref,
    init: Ref,
    dims: Vec<usize>,
    strides: Vec<usize>,
    padding: Vec<(i64, i64)>,
    ty: String,
) -> NifOut<Ref> {
    let op = if is_min {
        "window_scatter_min"
    } else {
        "window_scatter_max"
    };
    super::program::enter(env);
    let to = dtype(op, &ty)?;
    let padding: Vec<(isize, isize)> = padding
        .iter()
        .map(|&(lo, hi)| (lo as isize, hi as isize))
        .collect();
    super::program::op(op, &[&r, &source, &init], move |x| {
        window::window_scatter(is_min, &x[0], &x[1], &x[2], &dims, &strides, &padding, to)
    })
}

/// Nx conv options as the Elixir side passes them (a map with atom keys).
#[derive(rustler::NifMap)]
struct ConvOpts {
    strides: Vec<usize>,
    padding: Vec<(i64, i64)>,
    input_dilation: Vec<usize>,
    kernel_dilation: Vec<usize>,
    feature_group_size: usize,
    batch_group_size: usize,
    input_permutation: Vec<usize>,
    kernel_permutation: Vec<usize>,
    output_permutation: Vec<usize>,
}

#[rustler::nif(schedule = "DirtyCpu")]
fn t_conv(env: Env<'_>, input: Ref, kernel: Ref, o: ConvOpts, ty: String) -> NifOut<Ref> {
    super::program::enter(env);
    let to = dtype("conv", &ty)?;
    let spec = conv::ConvSpec {
        strides: o.strides,
        padding: o
            .padding
            .iter()
            .map(|&(lo, hi)| (lo as isize, hi as isize))
            .collect(),
        input_dilation: o.input_dilation,
        kernel_dilation: o.kernel_dilation,
        feature_groups: o.feature_group_size,
        batch_groups: o.batch_group_size,
        input_permutation: o.input_permutation,
        kernel_permutation: o.kernel_permutation,
        output_permutation: o.output_permutation,
    };
    op("conv", &[&input, &kernel], move |x| {
        conv::conv(&x[0], &x[1], &spec, to)
    })
}

#[rustler::nif(schedule = "DirtyCpu")]
fn t_triangular_solve(
    env: Env<'_>,
    a: Ref,
    b: Ref,
    left_side: bool,
    lower: bool,
    transform_a: String,
    ty: String,
) -> NifOut<Ref> {
    super::program::enter(env);
    let name = "triangular_solve";
    let transform_a = match transform_a.as_str() {
        "none" => triangular::TransformA::None,
        "transpose" => triangular::TransformA::Transpose,
        "conjugate" => triangular::TransformA::Conjugate,
        other => {
            let e =
                crate::invalid!("transform_a must be none, transpose or conjugate, got {other}");
            return Err(err(name, e));
        }
    };
    let opts = triangular::TriangularSolveOpts {
        left_side,
        lower,
        transform_a,
    };
    let to = dtype(name, &ty)?;
    op(name, &[&a, &b], move |x| {
        triangular::triangular_solve(&x[0], &x[1], opts, to)
    })
}

twin_nif! {
    t_argreduce_nb / t_argreduce_dirty => fn t_argreduce(
        r: Ref,
        axis: Option<usize>,
        keep: bool,
        is_min: bool,
        tie_high: bool,
        ty: String,
    ) -> NifOut<Ref> {
        let name = if is_min { "argmin" } else { "argmax" };
        let to = dtype(name, &ty)?;
        op(name, &[&r], move |x| reduce::argreduce(&x[0], axis, keep, is_min, tie_high, to))
    }
}

twin_nif! {
    t_dot_nb / t_dot_dirty => fn t_dot(
        a: Ref,
        ca: Vec<usize>,
        ba: Vec<usize>,
        b: Ref,
        cb: Vec<usize>,
        bb: Vec<usize>,
        ty: String,
    ) -> NifOut<Ref> {
        let to = dtype("dot", &ty)?;
        op("dot", &[&a, &b], move |x| dot::dot(&x[0], &ca, &ba, &x[1], &cb, &bb, to))
    }
}

twin_nif! {
    t_slice_nb / t_slice_dirty => fn t_slice(r: Ref, start: Vec<usize>, lengths: Vec<usize>, strides: Vec<usize>) -> NifOut<Ref> {
        op("slice", &[&r], move |x| shape::slice(&x[0], &start, &lengths, &strides))
    }
}

twin_nif! {
    t_put_slice_nb / t_put_slice_dirty => fn t_put_slice(r: Ref, start: Vec<usize>, update: Ref, ty: String) -> NifOut<Ref> {
        let to = dtype("put_slice", &ty)?;
        op("put_slice", &[&r, &update], move |x| shape::put_slice(&x[0], &start, &x[1], to))
    }
}

twin_nif! {
    t_concatenate_nb / t_concatenate_dirty => fn t_concatenate(refs: Vec<Ref>, axis: usize, ty: String) -> NifOut<Ref> {
        let to = dtype("concatenate", &ty)?;
        let refs: Vec<&Ref> = refs.iter().collect();
        op("concatenate", &refs, move |x| shape::concatenate(x, axis, to))
    }
}

twin_nif! {
    t_reverse_nb / t_reverse_dirty => fn t_reverse(r: Ref, axes: Vec<usize>) -> NifOut<Ref> {
        op("reverse", &[&r], move |x| shape::reverse(&x[0], &axes))
    }
}

twin_nif! {
    t_pad_nb / t_pad_dirty => fn t_pad(r: Ref, value: Ref, config: Vec<(isize, isize, usize)>, ty: String) -> NifOut<Ref> {
        let to = dtype("pad", &ty)?;
        op("pad", &[&r, &value], move |x| shape::pad(&x[0], &x[1], &config, to))
    }
}

twin_nif! {
    t_select_nb / t_select_dirty => fn t_select(pred: Ref, on_true: Ref, on_false: Ref, shp: Vec<usize>, ty: String) -> NifOut<Ref> {
        let to = dtype("select", &ty)?;
        op("select", &[&pred, &on_true, &on_false], move |x| {
            indexing::select(&x[0], &x[1], &x[2], &shp, to)
        })
    }
}

twin_nif! {
    t_clip_nb / t_clip_dirty => fn t_clip(r: Ref, min: Ref, max: Ref, ty: String) -> NifOut<Ref> {
        let to = dtype("clip", &ty)?;
        op("clip", &[&r, &min, &max], move |x| indexing::clip(&x[0], &x[1], &x[2], to))
    }
}

twin_nif! {
    t_gather_nb / t_gather_dirty => fn t_gather(r: Ref, indices: Ref, axes: Vec<usize>) -> NifOut<Ref> {
        op("gather", &[&r, &indices], move |x| indexing::gather(&x[0], &x[1], &axes))
    }
}

#[rustler::nif(schedule = "DirtyCpu")]
fn t_indexed(
    env: Env<'_>,
    put: bool,
    target: Ref,
    indices: Ref,
    updates: Ref,
    axes: Vec<usize>,
    ty: String,
) -> NifOut<Ref> {
    super::program::enter(env);
    let name = if put { "indexed_put" } else { "indexed_add" };
    let to = dtype(name, &ty)?;
    op(name, &[&target, &indices, &updates], move |x| {
        if put {
            scatter::indexed_put(&x[0], &x[1], &x[2], &axes, to)
        } else {
            scatter::indexed_add(&x[0], &x[1], &x[2], &axes, to)
        }
    })
}

#[rustler::nif(schedule = "DirtyCpu")]
fn t_sort(env: Env<'_>, r: Ref, axis: usize, desc: bool, indices: bool, ty: String) -> NifOut<Ref> {
    super::program::enter(env);
    let name = if indices { "argsort" } else { "sort" };
    let to = dtype(name, &ty)?;
    op(name, &[&r], move |x| {
        if indices {
            sort::argsort(&x[0], axis, desc, to)
        } else {
            sort::sort(&x[0], axis, desc)
        }
    })
}

twin_nif! {
    t_bitcast_nb / t_bitcast_dirty => fn t_bitcast(r: Ref, ty: String) -> NifOut<Ref> {
        let to = dtype("bitcast", &ty)?;
        op("bitcast", &[&r], move |x| shape::bitcast(&x[0], to))
    }
}

/// Nx `fft` (or `ifft` when `inverse`) along `axis` with `length` points.
#[rustler::nif(schedule = "DirtyCpu")]
fn t_fft(
    env: Env<'_>,
    r: Ref,
    inverse: bool,
    length: usize,
    axis: usize,
    eps: f64,
    ty: String,
) -> NifOut<Ref> {
    super::program::enter(env);
    let name = if inverse { "ifft" } else { "fft" };
    let to = dtype(name, &ty)?;
    op(name, &[&r], move |x| {
        complex::fft(&x[0], length, axis, eps, inverse, to)
    })
}
