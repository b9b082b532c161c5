//! Term conversions shared by the NIFs.

use crate::dtype::DType;
use crate::error::Error;
use crate::ops::creation::Scalar;
use rustler::{Atom, Decoder, NifResult, Term};

/// What a failed NIF returns: `{:error, {kind, message}}`.
pub type NifError = (Atom, String);

/// `Result` of a NIF: `{:ok, T}` or `{:error, {kind, message}}`.
pub type NifOut<T> = Result<T, NifError>;

rustler::atoms! {
    invalid_argument,
    unsupported,
    no_device,
    out_of_memory,
    vulkan,
    would_block,
    would_block_collect,
    large,
    small,
    arithmetic,
    not_recordable,
}

/// The error tuple for an engine error, prefixed with the op that failed.
pub fn err(op: &str, e: Error) -> NifError {
    let kind = match e {
        Error::InvalidArgument(_) => invalid_argument(),
        Error::Unsupported(_) => unsupported(),
        Error::NoDevice(_) => no_device(),
        Error::OutOfMemory(_) => out_of_memory(),
        Error::Vulkan(_) => vulkan(),
        Error::WouldBlock(_) => would_block(),
        Error::Arithmetic(_) => arithmetic(),
    };
    match e {
        // Nx's own arithmetic error (what BinaryBackend raises), word for word.
        Error::Arithmetic(m) => (kind, m),
        e => (kind, format!("{op}: {e}")),
    }
}

/// Maps an engine result into a NIF result.
pub fn wrap<T>(op: &str, r: crate::error::Result<T>) -> NifOut<T> {
    r.map_err(|e| err(op, e))
}

/// Parses an Nx type name (`"f32"`).
pub fn dtype(op: &str, name: &str) -> NifOut<DType> {
    wrap(op, DType::parse(name))
}

/// A scalar: integer (any size up to 128 bits), float, :nan / :infinity / :neg_infinity,
/// or a complex number as a `{re, im}` tuple of those.
pub struct ScalarTerm(pub Scalar);

/// A real part of a complex scalar as an f64.
fn part(term: Term<'_>) -> NifResult<f64> {
    match term.decode::<ScalarTerm>()?.0 {
        Scalar::Int(i) => Ok(i as f64),
        Scalar::Float(f) => Ok(f),
        Scalar::Complex(..) => Err(rustler::Error::BadArg),
    }
}

impl<'a> Decoder<'a> for ScalarTerm {
    fn decode(term: Term<'a>) -> NifResult<Self> {
        if let Ok((re, im)) = term.decode::<(Term<'a>, Term<'a>)>() {
            return Ok(ScalarTerm(Scalar::Complex(part(re)?, part(im)?)));
        }
        if let Ok(i) = term.decode::<i64>() {
            return Ok(ScalarTerm(Scalar::Int(i as i128)));
        }
        if let Ok(u) = term.decode::<u64>() {
            return Ok(ScalarTerm(Scalar::Int(u as i128)));
        }
        if let Ok(f) = term.decode::<f64>() {
            return Ok(ScalarTerm(Scalar::Float(f)));
        }
        if let Ok(a) = term.decode::<Atom>() {
            if a == super::nan() {
                return Ok(ScalarTerm(Scalar::Float(f64::NAN)));
            }
            if a == super::infinity() {
                return Ok(ScalarTerm(Scalar::Float(f64::INFINITY)));
            }
            if a == super::neg_infinity() {
                return Ok(ScalarTerm(Scalar::Float(f64::NEG_INFINITY)));
            }
        }
        Err(rustler::Error::BadArg)
    }
}
