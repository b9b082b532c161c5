//! Binary element-wise ops against host references.
//!
//! Integers: bit-exact with wrapping semantics in the output type; quotient truncates,
//! remainder takes the dividend's sign, right shifts are arithmetic for signed types.
//! Floats: add/subtract/multiply/divide, min/max, comparisons and logical ops are exact
//! (IEEE single rounding); remainder is exact too (fmod). Tolerances, against the f64
//! reference of the same f32 inputs: pow 2e-6 relative (the driver's pow is
//! exp2(y * log2(x)), a few ulp off); atan2 4e-5 relative + 1e-7 absolute (Vulkan allows
//! atan 4096 ulp; lavapipe's is ~5e-6 off, e.g. atan2(1, 1)).

mod common;

use common::*;
use nx_vulkan::ops::elementwise::{binary, BinaryOp, BINARY_OPS};
use nx_vulkan::{DType, Error, Tensor};
use BinaryOp::*;

const INT_TYPES: [DType; 8] = [
    DType::U8,
    DType::S8,
    DType::U16,
    DType::S16,
    DType::U32,
    DType::S32,
    DType::U64,
    DType::S64,
];

fn int_bits(d: DType) -> u32 {
    d.bits() as u32
}

/// `v` wrapped into the range of integer type `d`.
fn wrap(v: i128, d: DType) -> i128 {
    let bits = int_bits(d);
    let m = v.rem_euclid(1i128 << bits);
    if d.is_signed_int() && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

fn encode(vals: &[i128], d: DType) -> Vec<u8> {
    vals.iter()
        .flat_map(|&v| (v as u64).to_le_bytes()[..d.size()].to_vec())
        .collect()
}

fn decode(b: &[u8], d: DType) -> Vec<i128> {
    b.chunks(d.size())
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            wrap(u64::from_le_bytes(w) as i128, d)
        })
        .collect()
}

fn is_predicate(op: BinaryOp) -> bool {
    matches!(
        op,
        Equal
            | NotEqual
            | Greater
            | Less
            | GreaterEqual
            | LessEqual
            | LogicalAnd
            | LogicalOr
            | LogicalXor
    )
}

/// Reference for integer ops whose result is an integer (of type `d`, or u8 0/1).
fn int_ref(op: BinaryOp, a: i128, b: i128, d: DType) -> i128 {
    let t = |c: bool| c as i128;
    match op {
        Add => wrap(a + b, d),
        Subtract => wrap(a - b, d),
        Multiply => wrap(a.wrapping_mul(b), d),
        Quotient => wrap(a / b, d), // i128 division truncates
        Remainder => a % b,         // sign of the dividend
        Min => a.min(b),
        Max => a.max(b),
        BitwiseAnd => wrap(a & b, d),
        BitwiseOr => wrap(a | b, d),
        BitwiseXor => wrap(a ^ b, d),
        LeftShift => wrap(a << b, d),
        // Arithmetic for signed (a is sign-carrying), logical for unsigned (a >= 0).
        RightShift => a >> b,
        Pow => (0..b).fold(1i128, |acc, _| wrap(acc.wrapping_mul(a), d)),
        Equal => t(a == b),
        NotEqual => t(a != b),
        Greater => t(a > b),
        Less => t(a < b),
        GreaterEqual => t(a >= b),
        LessEqual => t(a <= b),
        LogicalAnd => t(a != 0 && b != 0),
        LogicalOr => t(a != 0 || b != 0),
        LogicalXor => t((a != 0) != (b != 0)),
        Divide | Atan2 => unreachable!("float-valued"),
    }
}

/// Operands for `op` on type `d`: edge values first, then random ones; divisors are
/// non-zero (and never MIN / -1), shift counts below the width, exponents in 0..=20.
fn int_operands(op: BinaryOp, d: DType, n: usize, rng: &mut Rng) -> (Vec<i128>, Vec<i128>) {
    let bits = int_bits(d);
    let (lo, hi) = if d.is_signed_int() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    };
    let any = |rng: &mut Rng| wrap(((rng.next_u64() as i128) << 64) | rng.next_u64() as i128, d);
    let small = |rng: &mut Rng| wrap(rng.int(-9, 9) as i128, d);
    let edges = [lo, hi, 0, 1, wrap(-1, d), lo + 1, hi - 1, 2, 7];
    let mut a: Vec<i128> = (0..n)
        .map(|i| {
            if i < edges.len() {
                edges[i]
            } else if i % 3 == 0 {
                small(rng)
            } else {
                any(rng)
            }
        })
        .collect();
    let b: Vec<i128> = (0..n)
        .map(|i| match op {
            Quotient | Remainder | Divide => loop {
                let v = if i % 2 == 0 { small(rng) } else { any(rng) };
                if v != 0 && !(v == -1 && d.is_signed_int()) {
                    break v;
                }
            },
            LeftShift | RightShift => rng.int(0, bits as i64 - 1) as i128,
            Pow => rng.int(0, 20) as i128,
            _ if i % 4 == 0 => a[i], // equal operands for the comparisons
            _ if i % 5 == 0 => 0,
            _ => any(rng),
        })
        .collect();
    if op == Pow {
        for (i, x) in a.iter_mut().enumerate() {
            if i % 2 == 0 {
                *x = small(rng); // small bases show exact powers, others the wrapping
            }
        }
    }
    (a, b)
}

#[test]
fn integer_ops_match_wrapping_reference() {
    let mut rng = Rng::new(10);
    let n = 301;
    for d in INT_TYPES {
        for (name, op) in BINARY_OPS {
            let (a, b) = int_operands(op, d, n, &mut rng);
            let ta = Tensor::from_bytes(&[n], d, &encode(&a, d)).unwrap();
            let tb = Tensor::from_bytes(&[n], d, &encode(&b, d)).unwrap();
            let ctx = format!("{name} on {d:?}");
            if matches!(op, Divide | Atan2) {
                // Nx gives integer division and atan2 a float result.
                let got: Vec<f32> = match binary(op, &ta, &tb, &[n], DType::F32) {
                    Ok(t) => download(&t),
                    Err(Error::Unsupported(_)) if op == Atan2 && d.bits() == 64 => continue,
                    Err(e) => panic!("{ctx}: {e}"),
                };
                for i in 0..n {
                    // Nx divides the integers' values in double and rounds once (types
                    // past f32's 24 bits compute in f64; see tests/mixed_types.rs).
                    let (x, y) = (a[i] as f64, b[i] as f64);
                    if op == Divide {
                        let q = (x / y) as f32;
                        assert_eq!(got[i], q, "{ctx}: {x} / {y} (element {i})");
                    } else {
                        let w = x.atan2(y);
                        let g = got[i] as f64;
                        assert!(
                            (g - w).abs() <= 1e-7 + 4e-5 * w.abs(),
                            "{ctx}: atan2({x}, {y}) got {g} want {w}"
                        );
                    }
                }
                continue;
            }
            let out_type = if is_predicate(op) { DType::U8 } else { d };
            let t = binary(op, &ta, &tb, &[n], out_type).unwrap_or_else(|e| panic!("{ctx}: {e}"));
            assert_eq!(t.dtype, out_type);
            let got = decode(&t.to_bytes().unwrap(), out_type);
            for i in 0..n {
                let want = int_ref(op, a[i], b[i], d);
                assert_eq!(got[i], want, "{ctx}: a={} b={} (element {i})", a[i], b[i]);
            }
        }
    }
}

#[test]
fn integer_division_by_zero_gives_zero() {
    // Documented in binary.comp: quotient and remainder by 0 store 0 (no trap).
    let a = upload(&[4], DType::S32, &[7i32, -7, 0, i32::MIN]);
    let z = upload(&[4], DType::S32, &[0i32; 4]);
    for op in [Quotient, Remainder] {
        let t = binary(op, &a, &z, &[4], DType::S32).unwrap();
        assert_eq!(download::<i32>(&t), vec![0; 4], "{op:?}");
    }
}

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

/// (a, b) pairs for pow: signed zeros, negative bases, NaN and infinite operands.
#[rustfmt::skip]
const POW_PAIRS: &[(f64, f64)] = &[
    (0.0, -1.0), (-0.0, -1.0), (-0.0, -2.0), (-2.0, 3.0), (-2.0, 0.5), (NAN, 0.0), (1.0, NAN),
    (2.0, INF), (0.5, INF), (2.0, -INF), (INF, 2.0), (-INF, 3.0), (0.0, 0.0), (3.0, 4.0),
    (10.0, -2.0), (-1.5, -3.0), (-1.0, INF), (-1.0, -INF), (-INF, 0.5), (-INF, -0.5),
    (-INF, -2.0), (-0.5, INF), (0.0, -INF),
];

/// (a, b) pairs for every other op: NaN, infinities, signed zeros, subnormals, and
/// quotients that round to an integer (1 % 0.1).
#[rustfmt::skip]
const EDGE_PAIRS: &[(f64, f64)] = &[
    (NAN, 1.0), (1.0, NAN), (NAN, NAN), (INF, 1.0), (-INF, INF), (INF, INF), (0.0, -0.0),
    (-0.0, 0.0), (-0.0, -0.0), (1.0, 0.0), (-1.0, 0.0), (0.0, 0.0), (5.5, 2.0), (-5.5, 2.0),
    (5.5, -2.0), (1.0, 0.1), (1e30, 1e-30), (3.0, INF), (-3.0, -INF), (1e-45, 2.0),
];

/// Inputs that exercise IEEE edge cases, then random values in [-10, 10).
fn float_operands(op: BinaryOp, n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let pairs = if op == Pow { POW_PAIRS } else { EDGE_PAIRS };
    let mut a: Vec<f64> = pairs.iter().map(|p| p.0).collect();
    let mut b: Vec<f64> = pairs.iter().map(|p| p.1).collect();
    while a.len() < n {
        let x = rng.uniform(-10.0, 10.0);
        let y = match op {
            Pow if a.len().is_multiple_of(2) => rng.int(-6, 6) as f64,
            Pow => rng.uniform(-4.0, 4.0),
            _ if a.len().is_multiple_of(7) => x,
            _ => rng.uniform(-10.0, 10.0),
        };
        a.push(if op == Pow && a.len() % 2 == 1 {
            x.abs()
        } else {
            x
        });
        b.push(y);
    }
    let r = |v: f64| v as f32 as f64; // inputs are f32 values
    (
        a.into_iter().map(r).collect(),
        b.into_iter().map(r).collect(),
    )
}

/// f64 reference of `op` on f32 values (for predicates: 0/1).
fn float_ref(op: BinaryOp, a: f64, b: f64) -> f64 {
    let t = |c: bool| c as u8 as f64;
    match op {
        Add => a + b,
        Subtract => a - b,
        Multiply => a * b,
        Divide => a / b,
        Pow => a.powf(b),
        Remainder => a % b,
        Atan2 => a.atan2(b),
        Min | Max if a.is_nan() || b.is_nan() => f64::NAN,
        Min => a.min(b),
        Max => a.max(b),
        Equal => t(a == b),
        NotEqual => t(a != b),
        Greater => t(a > b),
        Less => t(a < b),
        GreaterEqual => t(a >= b),
        LessEqual => t(a <= b),
        LogicalAnd => t(a != 0.0 && b != 0.0),
        LogicalOr => t(a != 0.0 || b != 0.0),
        LogicalXor => t((a != 0.0) != (b != 0.0)),
        _ => unreachable!(),
    }
}

/// Integer-only ops have no float kernel.
fn float_supported(op: BinaryOp) -> bool {
    !matches!(
        op,
        Quotient | BitwiseAnd | BitwiseOr | BitwiseXor | LeftShift | RightShift
    )
}

#[test]
fn float_ops_match_reference() {
    // f32 math goes through f64 on devices with it, unless NX_VULKAN_F32_MATH=native.
    let has_f64 = nx_vulkan::engine::engine().unwrap().info().f64
        && std::env::var("NX_VULKAN_F32_MATH").map_or(true, |v| v != "native");
    let mut rng = Rng::new(11);
    let n = 400;
    for d in [DType::F32, DType::F64] {
        for (name, op) in BINARY_OPS {
            let ctx = format!("{name} on {d:?}");
            let (a, b) = float_operands(op, n, &mut rng);
            let (ta, tb) = if d == DType::F32 {
                let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<_>>();
                (upload(&[n], d, &f(&a)), upload(&[n], d, &f(&b)))
            } else {
                (upload(&[n], d, &a), upload(&[n], d, &b))
            };
            let out_type = if is_predicate(op) { DType::U8 } else { d };
            let res = binary(op, &ta, &tb, &[n], out_type);
            if !float_supported(op) {
                assert!(
                    matches!(res, Err(Error::Unsupported(_))),
                    "{ctx}: expected Unsupported"
                );
                continue;
            }
            let t = res.unwrap_or_else(|e| panic!("{ctx}: {e}"));
            let got: Vec<f64> = match out_type {
                DType::U8 => download::<u8>(&t).iter().map(|&x| x as f64).collect(),
                DType::F32 => download::<f32>(&t).iter().map(|&x| x as f64).collect(),
                _ => download::<f64>(&t),
            };
            for i in 0..n {
                // The reference is computed in f64 and rounded once to the output type,
                // which is exactly IEEE single (or double) rounding for + - * /.
                let w = float_ref(op, a[i], b[i]);
                let w = if d == DType::F32 && !is_predicate(op) {
                    w as f32 as f64
                } else {
                    w
                };
                let g = got[i];
                let msg = format!("{ctx}: a={:e} b={:e} got {g:e} want {w:e}", a[i], b[i]);
                if w.is_nan() {
                    assert!(g.is_nan(), "{msg}");
                    continue;
                }
                // pow and atan2 are computed in f64 (f32 through f64, rounded once) where
                // the device has it: within an ulp of the host's libm. Without f64 the
                // f32 kernels use the driver's exp2/log2/atan.
                let ulp = if d == DType::F64 {
                    f64::EPSILON
                } else {
                    f32::EPSILON as f64
                };
                let exact_math = d == DType::F64 || has_f64;
                match op {
                    Pow | Atan2 if exact_math => {
                        assert!(g == w || (g - w).abs() <= ulp * w.abs() + 1e-300, "{msg}")
                    }
                    Pow => assert!(g == w || (g - w).abs() <= 2e-6 * w.abs(), "{msg}"),
                    Atan2 => assert!((g - w).abs() <= 1e-7 + 4e-5 * w.abs(), "{msg}"),
                    Min | Max => assert_eq!(g, w, "{msg}"),
                    Remainder => {
                        assert!(g == w, "{msg}");
                        assert_eq!(g.is_sign_negative(), a[i].is_sign_negative(), "{msg}: sign");
                    }
                    _ => assert_eq!(g.to_bits(), w.to_bits(), "{msg}: bits"),
                }
            }
        }
    }
}

#[test]
fn float_remainder_is_fmod() {
    // fmod is exact; a - b * trunc(a / b) in f32 is not when a / b rounds to an integer.
    let a = upload(&[4], DType::F32, &[1.0f32, 7.3, -1.0, 1.0e7 + 1.0]);
    let b = upload(&[4], DType::F32, &[0.1f32, 0.7, 0.1, 3.3]);
    let got: Vec<f32> = download(&binary(Remainder, &a, &b, &[4], DType::F32).unwrap());
    let want: Vec<f32> = [
        (1.0f32, 0.1f32),
        (7.3, 0.7),
        (-1.0, 0.1),
        (1.0e7 + 1.0, 3.3),
    ]
    .iter()
    .map(|&(x, y)| (x as f64 % y as f64) as f32)
    .collect();
    assert_eq!(got, want);
}
