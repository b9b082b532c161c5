//! Decoding and comparison for the nx-golden corpus (format `nx-golden/1`, see the
//! corpus README): JSON lines of Nx.Backend calls recorded from real Nx 0.13.

use base64::Engine as _;
use nx_vulkan::ops::creation::Scalar;
use nx_vulkan::{DType, Tensor};
use serde::Deserialize;
use serde_json::Value;

/// A tensor as the corpus stores it.
#[derive(Deserialize, Clone, Debug)]
pub struct GTensor {
    pub shape: Vec<usize>,
    #[serde(rename = "type")]
    pub ty: String,
    pub data: String,
}

/// The output template.
#[derive(Deserialize, Clone, Debug)]
pub struct Out {
    pub shape: Vec<usize>,
    #[serde(rename = "type")]
    pub ty: String,
}

/// One tagged argument.
#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Arg {
    Tensor(GTensor),
    Tensors(Vec<GTensor>),
    Opts(serde_json::Map<String, Value>),
    Number(Value),
    Bytes(String),
    Value(Value),
}

/// The recorded result.
#[derive(Deserialize, Clone, Debug)]
#[serde(rename_all = "snake_case")]
pub enum Res {
    Tensor(GTensor),
    /// `to_batched`'s list of tensors (not replayed).
    Tensors(serde::de::IgnoredAny),
}

/// One recorded call.
#[derive(Deserialize, Clone, Debug)]
pub struct Call {
    pub id: u64,
    pub source: String,
    pub op: String,
    pub out: Out,
    pub args: Vec<Arg>,
    pub result: Res,
}

/// Why a call could not be replayed.
pub enum Skip {
    /// The engine has no implementation (op or type): counted as skipped.
    Unsupported(String),
}

pub fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .expect("corpus base64")
}

/// The type of a corpus type name, or a skip for types the engine does not store.
pub fn dtype(name: &str) -> Result<DType, Skip> {
    DType::parse(name).map_err(|_| Skip::Unsupported(format!("type {name}")))
}

/// Uploads a corpus tensor.
pub fn upload(t: &GTensor) -> Result<Tensor, Skip> {
    let ty = dtype(&t.ty)?;
    Ok(Tensor::from_binary(&t.shape, ty, &b64(&t.data)).expect("upload"))
}

/// A number (JSON int, float, or tagged special float).
pub fn scalar(v: &Value) -> Result<Scalar, Skip> {
    match v {
        Value::Number(n) if n.is_i64() => Ok(Scalar::Int(n.as_i64().unwrap() as i128)),
        Value::Number(n) if n.is_u64() => Ok(Scalar::Int(n.as_u64().unwrap() as i128)),
        Value::Number(n) => Ok(Scalar::Float(n.as_f64().unwrap())),
        Value::Object(m) if m.contains_key("complex") => {
            let parts = m["complex"].as_array().expect("[re, im]");
            let part = |v: &Value| match scalar(v)? {
                Scalar::Int(i) => Ok(i as f64),
                Scalar::Float(f) => Ok(f),
                Scalar::Complex(..) => Err(Skip::Unsupported(format!("number {v}"))),
            };
            Ok(Scalar::Complex(part(&parts[0])?, part(&parts[1])?))
        }
        Value::Object(m) if m.contains_key("float") => {
            Ok(Scalar::Float(match m["float"].as_str().unwrap() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                _ => -0.0,
            }))
        }
        other => Err(Skip::Unsupported(format!("number {other}"))),
    }
}

/// A list of non-negative integers.
pub fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .expect("list")
        .iter()
        .map(|x| x.as_u64().expect("index") as usize)
        .collect()
}

/// Per-axis `[[lo, hi], ...]` padding (window ops, window_scatter, conv).
pub fn lo_hi_pairs(v: &Value) -> Vec<(isize, isize)> {
    v.as_array()
        .expect("padding list")
        .iter()
        .map(|e| {
            let e = e.as_array().expect("[lo, hi]");
            let int = |x: &Value| x.as_i64().expect("padding") as isize;
            (int(&e[0]), int(&e[1]))
        })
        .collect()
}

/// How strictly a result is compared.
#[derive(Clone, Copy, Debug)]
pub enum Tol {
    /// Bit for bit (floats: ±0 and NaN payloads equal; narrow floats within 1 ulp, the
    /// reference truncates bf16 and rounds f16 through f32).
    Exact,
    /// Math functions: f32 within 4 ulps or 2e-7 absolute; f64 within 4 ulps (ours are
    /// correctly rounded, the reference's libm is within 1 ulp; expm1, log1p and sigmoid
    /// references are formulas like exp(x) - 1, a few ulps off themselves).
    Math,
    /// f64 erf_inv: Nx.BinaryBackend evaluates Giles' single-precision approximation in
    /// double (erf_inv(0.1) = 0.0888559878, exact 0.0888559905): relative 1e-7.
    SinglePrecisionReference,
    /// pow on f32: within 16 ulps. The kernel computes exp2(y * log2(x)) with the
    /// driver's exp2/log2, whose error grows with |y * log2(x)| (Vulkan allows it).
    Pow,
    /// Accumulations (sum, product, dot): relative 1e-5 (f32) / 1e-12 (f64), scaled.
    Accum,
}

fn float_at(bytes: &[u8], ty: DType, i: usize) -> f64 {
    let s = ty.size();
    let b = &bytes[i * s..(i + 1) * s];
    match ty {
        DType::F16 => half_to_f64(u16::from_le_bytes([b[0], b[1]])),
        DType::BF16 => f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64,
        DType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        DType::F8 => half_to_f64((b[0] as u16) << 8),
        DType::F8E4M3FN => {
            let (e, m) = ((b[0] >> 3) & 15, (b[0] & 7) as f64);
            let v = match (e, m) {
                (15, 7.0) => f64::NAN,
                (0, _) => m / 8.0 * 2f64.powi(-6),
                _ => (1.0 + m / 8.0) * 2f64.powi(e as i32 - 7),
            };
            if b[0] & 0x80 != 0 {
                -v
            } else {
                v
            }
        }
        _ => f64::from_le_bytes(b.try_into().unwrap()),
    }
}

fn half_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let e = ((h >> 10) & 0x1f) as i32;
    let m = (h & 0x3ff) as f64;
    match e {
        0 => sign * m * 2f64.powi(-24),
        31 if m == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1.0 + m / 1024.0) * 2f64.powi(e - 15),
    }
}

fn ulp(x: f64, ty: DType) -> f64 {
    let mant = match ty {
        DType::F8 => 2,
        DType::F8E4M3FN => 3,
        DType::F16 => 10,
        DType::BF16 => 7,
        DType::F32 => 23,
        _ => 52,
    };
    let min_exp = match ty {
        DType::F8 => -14,
        DType::F8E4M3FN => -6,
        DType::F16 => -14,
        DType::BF16 | DType::F32 => -126,
        _ => -1022,
    };
    let e = if x == 0.0 {
        min_exp
    } else {
        (x.abs().log2().floor() as i32).max(min_exp)
    };
    2f64.powi(e - mant)
}

/// Compares our bytes with the reference's; `Err` describes the first mismatch.
pub fn compare(ours: &[u8], want: &[u8], ty: DType, tol: Tol, k: usize) -> Result<(), String> {
    if ours.len() != want.len() {
        return Err(format!("{} bytes, expected {}", ours.len(), want.len()));
    }
    if ty.is_complex() {
        // Each part as a float of the component type.
        return compare(ours, want, ty.component(), tol, k);
    }
    if !ty.is_float() {
        return if ours == want {
            Ok(())
        } else {
            Err(first_diff(ours, want, ty))
        };
    }
    let n = ours.len() / ty.size();
    let narrow = matches!(ty, DType::F16 | DType::BF16 | DType::F8 | DType::F8E4M3FN);
    for i in 0..n {
        let (a, b) = (float_at(ours, ty, i), float_at(want, ty, i));
        if (a.is_nan() && b.is_nan()) || a == b {
            continue;
        }
        let u = ulp(b, ty);
        let ok = match tol {
            Tol::Exact => narrow && (a - b).abs() <= u,
            Tol::Math => match ty {
                DType::F64 => (a - b).abs() <= 4.0 * u,
                _ => (a - b).abs() <= 4.0 * u + if narrow { u } else { 2e-7 },
            },
            Tol::SinglePrecisionReference => (a - b).abs() <= 1e-7 * b.abs(),
            Tol::Pow => (a - b).abs() <= 16.0 * u + if ty == DType::F64 { 0.0 } else { 2e-7 },
            Tol::Accum => {
                let rel = if ty == DType::F64 {
                    1e-12
                } else if narrow {
                    1e-2
                } else {
                    1e-5
                };
                (a - b).abs() <= rel * (k.max(1) as f64).sqrt() * b.abs().max(1.0) + 2.0 * u
            }
        };
        if !ok {
            return Err(format!("element {i}: got {a}, expected {b} ({tol:?})"));
        }
    }
    Ok(())
}

fn first_diff(ours: &[u8], want: &[u8], ty: DType) -> String {
    let s = ty.size();
    let i = ours.iter().zip(want).position(|(a, b)| a != b).unwrap_or(0) / s;
    format!(
        "element {i}: got {:?}, expected {:?} ({})",
        &ours[i * s..(i + 1) * s],
        &want[i * s..(i + 1) * s],
        ty.name()
    )
}
