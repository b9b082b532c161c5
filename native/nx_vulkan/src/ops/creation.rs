//! Creation ops: constant, iota, eye (from_binary is `Tensor::from_bytes`).

use super::{grid, launch, u32_of, write, PushWords};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernel;
use crate::tensor::{numel, Tensor};

/// A scalar as Nx passes it: an integer, a float (NaN and infinities included) or a
/// complex number (real, imaginary).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

/// Bits of an f32 as an f16, rounded to nearest even.
pub fn f32_to_f16_bits(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let man = b & 0x7f_ffff;
    if exp == 0xff {
        return sign | 0x7c00 | if man != 0 { 0x200 } else { 0 };
    }
    let e = exp - 127 + 15;
    if e >= 0x1f {
        return sign | 0x7c00;
    }
    if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = man | 0x80_0000;
        let shift = (14 - e) as u32;
        let half = 1u32 << (shift - 1);
        let rest = m & ((1 << shift) - 1);
        let mut r = m >> shift;
        if rest > half || (rest == half && (r & 1) == 1) {
            r += 1;
        }
        return sign | r as u16;
    }
    let mut r = ((e as u32) << 10) | (man >> 13);
    let rest = man & 0x1fff;
    if rest > 0x1000 || (rest == 0x1000 && (r & 1) == 1) {
        r += 1;
    }
    sign | r as u16
}

/// Bits of an f32 as a bf16 as Nx stores one: the f32's upper half (Nx.BinaryBackend
/// writes the top 16 bits of the nearest f32: `Nx.tensor(1.7, type: :bf16)` is
/// 1.6953125), NaN as 0x7FC0.
pub fn f32_to_bf16_bits(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    (x.to_bits() >> 16) as u16
}

/// Bits of an f32 as an f8 (E5M2): the top byte of its f16, as Nx stores it (NaN 0x7E).
pub fn f32_to_f8_bits(x: f32) -> u8 {
    if x.is_nan() {
        return 0x7e;
    }
    (f32_to_f16_bits(x) >> 8) as u8
}

/// Bits of an f32 as an f8_e4m3fn, as `Nx.Floating.dump_f8_e4m3fn` writes them: clamped
/// to +-448, the mantissa rounded half away from zero and clamped to 7.
pub fn f32_to_f8e4m3_bits(x: f32) -> u8 {
    if x.is_nan() {
        return 0x7f;
    }
    let sign = ((x.to_bits() >> 31) as u8) << 7;
    let a = x.abs().min(448.0);
    if a == 0.0 {
        return sign;
    }
    // The exponent in f64 (Nx's :math.log2): f32's log2 rounds up just below a power of 2.
    let unbiased = (a as f64).log2().floor() as i32;
    let exp = unbiased + 7;
    if exp <= 0 {
        return sign | ((a * 512.0).round() as u8).min(7);
    }
    let significand = a / 2f32.powi(unbiased);
    let mut m = (((significand - 1.0) * 8.0).round() as u8).min(7);
    if exp == 15 && m >= 7 {
        m = 6;
    }
    sign | (exp as u8) << 3 | m
}

/// The little-endian bytes of `v` as one element of `dtype` (integers wrap, floats
/// round to nearest; a float stored in an integer type truncates toward zero; a complex
/// number stored in a real type keeps its real part).
pub fn scalar_bytes(v: Scalar, dtype: DType) -> Vec<u8> {
    let as_int = |v: Scalar| -> i128 {
        match v {
            Scalar::Int(i) => i,
            Scalar::Float(f) | Scalar::Complex(f, _) if f.is_nan() => 0,
            Scalar::Float(f) | Scalar::Complex(f, _) => f.trunc() as i128,
        }
    };
    let as_f64 = |v: Scalar| -> f64 {
        match v {
            Scalar::Int(i) => i as f64,
            Scalar::Float(f) | Scalar::Complex(f, _) => f,
        }
    };
    let imag = match v {
        Scalar::Complex(_, im) => im,
        _ => 0.0,
    };
    match dtype {
        DType::U8 | DType::S8 => vec![as_int(v) as u8],
        DType::U2 | DType::U4 | DType::S2 | DType::S4 => vec![dtype.wrap_int(as_int(v)) as u8],
        DType::F8 => vec![f32_to_f8_bits(as_f64(v) as f32)],
        DType::F8E4M3FN => vec![f32_to_f8e4m3_bits(as_f64(v) as f32)],
        DType::U16 | DType::S16 => (as_int(v) as u16).to_le_bytes().to_vec(),
        DType::U32 | DType::S32 => (as_int(v) as u32).to_le_bytes().to_vec(),
        DType::U64 | DType::S64 => (as_int(v) as u64).to_le_bytes().to_vec(),
        DType::F16 => f32_to_f16_bits(as_f64(v) as f32).to_le_bytes().to_vec(),
        DType::BF16 => f32_to_bf16_bits(as_f64(v) as f32).to_le_bytes().to_vec(),
        DType::F32 => (as_f64(v) as f32).to_le_bytes().to_vec(),
        DType::F64 => as_f64(v).to_le_bytes().to_vec(),
        DType::C64 => [
            (as_f64(v) as f32).to_le_bytes(),
            (imag as f32).to_le_bytes(),
        ]
        .concat(),
        DType::C128 => [as_f64(v).to_le_bytes(), imag.to_le_bytes()].concat(),
    }
}

/// Tensors of at most this many bytes are filled by the host (or carried in the command
/// stream: `Tensor::with_storage`); larger ones are a broadcast on the GPU.
const HOST_FILL_BYTES: usize = crate::tensor::IN_STREAM_UPLOAD_BYTES;

/// Nx `constant`: every element is `v`.
pub fn constant(shape: &[usize], dtype: DType, v: Scalar) -> Result<Tensor> {
    let one = scalar_bytes(v, dtype);
    let n = numel(shape)?;
    if crate::tensor::byte_len(shape, dtype)? <= HOST_FILL_BYTES {
        return Tensor::with_storage(shape, dtype, &one.repeat(n));
    }
    let scalar = Tensor::from_bytes(&[], dtype, &one)?;
    let mut filled = super::shape::broadcast(&scalar, shape, &[])?;
    filled.value_bits = scalar.value_bits;
    Ok(filled)
}

fn index_kernel(
    shape: &[usize],
    dtype: DType,
    mode: u32,
    dim: usize,
    inner: usize,
) -> Result<Tensor> {
    if dtype.is_complex() {
        // Counts are real: made in the component type, then given a zero imaginary part.
        let real = index_kernel(shape, dtype.component(), mode, dim, inner)?;
        return super::elementwise::as_type(&real, dtype);
    }
    let out = Tensor::empty(shape, dtype)?;
    let n = numel(shape)?;
    if n == 0 {
        return Ok(out);
    }
    let push = PushWords::new()
        .addr(&out.block)
        .u(u32_of(n, "element count")?)
        .u(u32_of(dim, "dimension")?)
        .u(u32_of(inner, "dimension")?);
    launch(
        Kernel::Index(dtype.compute()),
        [dtype.code() | mode << 8, 0],
        &push,
        grid(n as u64),
        &[write(&out.block)],
    )?;
    Ok(out)
}

/// Nx `iota`: counts along `axis`, or over the flattened tensor when `axis` is `None`.
pub fn iota(shape: &[usize], dtype: DType, axis: Option<usize>) -> Result<Tensor> {
    match axis {
        None => index_kernel(shape, dtype, 0, 1, 1),
        Some(a) if a < shape.len() => {
            let inner: usize = shape[a + 1..].iter().product();
            index_kernel(shape, dtype, 1, shape[a], inner.max(1))
        }
        Some(a) => Err(crate::invalid!(
            "iota: axis {a} is out of range for shape {shape:?}"
        )),
    }
}

/// Nx `eye`: identity matrices over the last two axes.
pub fn eye(shape: &[usize], dtype: DType) -> Result<Tensor> {
    if shape.len() < 2 {
        return Err(crate::invalid!(
            "eye: shape {shape:?} needs at least two axes"
        ));
    }
    let rows = shape[shape.len() - 2];
    let cols = shape[shape.len() - 1];
    index_kernel(shape, dtype, 2, rows.max(1), cols.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversions_round_to_nearest_even() {
        assert_eq!(f32_to_f16_bits(1.0), 0x3c00);
        assert_eq!(f32_to_f16_bits(-2.0), 0xc000);
        assert_eq!(f32_to_f16_bits(65504.0), 0x7bff);
        assert_eq!(f32_to_f16_bits(1.0e6), 0x7c00);
        assert_eq!(f32_to_f16_bits(5.960_464_5e-8), 0x0001);
        assert_eq!(f32_to_f16_bits(f32::NAN) & 0x7c00, 0x7c00);
        assert_eq!(f32_to_bf16_bits(1.0), 0x3f80);
        assert_eq!(f32_to_bf16_bits(1.0 + 1.0 / 256.0), 0x3f80); // toward zero, as Nx
        assert_eq!(f32_to_bf16_bits(1.0 + 3.0 / 256.0), 0x3f81);
        assert_eq!(f32_to_bf16_bits(1.7), 0x3fd9); // Nx: 1.6953125
    }

    #[test]
    fn f8_conversions_follow_nx() {
        // Nx.Type's constants: f8 max 0x7B, infinity 0x7C, NaN 0x7E.
        assert_eq!(f32_to_f8_bits(57344.0), 0x7b);
        assert_eq!(f32_to_f8_bits(f32::INFINITY), 0x7c);
        assert_eq!(f32_to_f8_bits(f32::NAN), 0x7e);
        assert_eq!(f32_to_f8_bits(1.0), 0x3c);
        // Truncated, not rounded: 1.2 is f16 0x3CCD.
        assert_eq!(f32_to_f8_bits(1.2), 0x3c);
        // Nx.Floating's doctests and type constants for f8_e4m3fn.
        assert_eq!(f32_to_f8e4m3_bits(1.0), 0x38);
        assert_eq!(f32_to_f8e4m3_bits(448.0), 0x7e);
        assert_eq!(f32_to_f8e4m3_bits(-448.0), 0xfe);
        assert_eq!(f32_to_f8e4m3_bits(f32::INFINITY), 0x7e);
        assert_eq!(f32_to_f8e4m3_bits(-0.0), 0x80);
        assert_eq!(f32_to_f8e4m3_bits(f32::NAN), 0x7f);
        assert_eq!(f32_to_f8e4m3_bits(2f32.powi(-6)), 0x08);
        assert_eq!(f32_to_f8e4m3_bits(2f32.powi(-9)), 0x01);
        // 1.99 rounds its mantissa to 8, which Nx clamps to 7 (no carry): 1.875.
        assert_eq!(f32_to_f8e4m3_bits(1.99), 0x3f);
        // Just below a power of two the exponent must not round up (Nx: 240, 0x77).
        assert_eq!(f32_to_f8e4m3_bits(256.0 - 2f32.powi(-16)), 0x77);
    }

    #[test]
    fn scalar_bytes_wrap_and_truncate() {
        assert_eq!(scalar_bytes(Scalar::Int(-1), DType::U8), vec![255]);
        assert_eq!(
            scalar_bytes(Scalar::Float(2.9), DType::S32),
            2i32.to_le_bytes().to_vec()
        );
        assert_eq!(
            scalar_bytes(Scalar::Int(3), DType::F32),
            3.0f32.to_le_bytes().to_vec()
        );
        let c = scalar_bytes(Scalar::Complex(1.5, -2.0), DType::C64);
        assert_eq!(c, [1.5f32.to_le_bytes(), (-2.0f32).to_le_bytes()].concat());
        assert_eq!(
            scalar_bytes(Scalar::Int(2), DType::C128)[8..],
            0.0f64.to_le_bytes()
        );
        assert_eq!(
            scalar_bytes(Scalar::Complex(-2.5, 1.0), DType::S8),
            vec![254]
        );
    }
}
