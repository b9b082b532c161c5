//! The functions Nx defines on complex numbers only where the imaginary parts are zero
//! (the `complex` library raises `ArithmeticError` otherwise): erf, erfc and erf_inv of a
//! complex tensor, and atan2 with a complex operand. They run on the real parts after one
//! check of the imaginary parts (a reduction and a one-byte read, so the call waits for
//! the GPU), and give complex results with zero imaginary parts, as Nx.BinaryBackend does.

use super::creation::{constant, Scalar};
use super::device_has_f64;
use super::elementwise::{as_type, binary, unary, BinaryOp, UnaryOp};
use super::reduce::{reduce, ReduceOp};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;

/// `t`'s real part in `component` (`t` itself, converted, when it is real).
fn real_part(t: &Tensor, component: DType) -> Result<Tensor> {
    if t.dtype.is_complex() {
        as_type(&as_type(t, t.dtype.component())?, component)
    } else {
        as_type(t, component)
    }
}

/// An `Error::Arithmetic` with `message` (Nx's) when a complex `t` has an imaginary part
/// that is not zero (NaN included, as `im != 0` in Elixir).
fn require_real(t: &Tensor, message: &str) -> Result<()> {
    if !t.dtype.is_complex() || t.numel() == 0 {
        return Ok(());
    }
    let imag = unary(UnaryOp::Imag, t, t.dtype.component())?;
    let any = reduce(ReduceOp::Any, &imag, None, false, DType::U8)?;
    if any.to_bytes()?[0] != 0 {
        return Err(Error::Arithmetic(message.to_string()));
    }
    Ok(())
}

/// erf, erfc or erf_inv of a complex tensor whose imaginary parts are zero, as
/// `Complex.erf/erfc/erf_inv` compute them: erf and erf_inv of the real part, and erfc as
/// `1 - erf` in double (the `complex` library subtracts; `:math.erfc` is not used), so a c64
/// erfc needs a device with f64 (else `Unsupported`, Nx.Vulkan's counted host fallback).
pub fn unary_of_real_part(op: UnaryOp, t: &Tensor, out_type: DType) -> Result<Tensor> {
    let name = match op {
        UnaryOp::Erf => "erf",
        UnaryOp::Erfc => "erfc",
        UnaryOp::ErfInv => "erf_inv",
        _ => {
            return Err(crate::invalid!(
                "{op:?} is defined on complex numbers of every value"
            ))
        }
    };
    let component = out_type.component();
    if op == UnaryOp::Erfc && !device_has_f64() {
        return Err(crate::unsupported!(
            "erfc of {}: Nx computes it as 1 - erf in double, and this device has no f64",
            t.dtype.name()
        ));
    }
    require_real(t, &format!("{name} not implemented for non-real numbers"))?;
    let real = if op == UnaryOp::Erfc {
        let x = real_part(t, DType::F64)?;
        let erf = unary(UnaryOp::Erf, &x, DType::F64)?;
        let one = constant(&[], DType::F64, Scalar::Float(1.0))?;
        let d = binary(BinaryOp::Subtract, &one, &erf, &x.shape, DType::F64)?;
        as_type(&d, component)?
    } else {
        unary(op, &real_part(t, component)?, component)?
    };
    as_type(&real, out_type)
}

/// Nx `atan2(a, b)` with a complex operand or output: `atan2` of the real parts when every
/// imaginary part is zero (`Complex.atan2`), with a zero imaginary part.
pub fn atan2_of_real_parts(
    a: &Tensor,
    b: &Tensor,
    out_shape: &[usize],
    out_type: DType,
) -> Result<Tensor> {
    let message = "Complex.atan2 only accepts real numbers as arguments";
    require_real(a, message)?;
    require_real(b, message)?;
    let component = out_type.component();
    let (ra, rb) = (real_part(a, component)?, real_part(b, component)?);
    let r = binary(BinaryOp::Atan2, &ra, &rb, out_shape, component)?;
    as_type(&r, out_type)
}
