//! Unary element-wise ops and as_type against host references.
//!
//! f32 math is checked against f64 math on the same inputs with per-op tolerances (see
//! `TOLERANCES`): the engine's own erf/erfc/erf_inv/expm1/log1p/tanh/... and the
//! driver's built-ins (exp, log, sin, atan...), which Vulkan lets be several ulp off
//! (atan/asin/acos even 4096 ulp; lavapipe's are ~5e-6 relative). Inputs avoid
//! subnormals for log/pow-based ops: lavapipe's log2 reads a subnormal as if its
//! exponent were -127, which Vulkan permits (denormals may be flushed).
//! Integer unary ops, rounding ops and conversions are bit-exact.

mod common;

use common::erf::{erf_inv_ref, erf_ref, erfc_ref};
use common::rounding::{f32_math_in_double, not_rounded_once};
use common::*;
use nx_vulkan::ops::elementwise::{unary, UnaryOp, UNARY_OPS};
use nx_vulkan::{DType, Error, Tensor};
use UnaryOp::*;

#[test]
fn erf_references_match_known_values() {
    for (x, e, c) in [
        (0.5, 0.520_499_877_813_046_5, 0.479_500_122_186_953_5),
        (1.0, 0.842_700_792_949_714_9, 0.157_299_207_050_285_1),
        (2.5, 0.999_593_047_982_555, 4.069_520_174_449_59e-4),
        (3.0, 0.999_977_909_503_001_4, 2.209_049_699_858_544e-5),
        (6.0, 1.0, 2.151_973_671_249_892e-17),
    ] {
        assert!((erf_ref(x) - e).abs() < 1e-15, "erf({x})");
        assert!(
            (erfc_ref(x) - c).abs() < 1e-13 * c,
            "erfc({x}) = {}",
            erfc_ref(x)
        );
    }
    for y in [-0.999, -0.5, -0.1, 0.0, 0.3, 0.5, 0.9, 0.999_999] {
        let x = erf_inv_ref(y);
        assert!((erf_ref(x) - y).abs() < 1e-15, "erf_inv({y})");
    }
}

fn f64_ref(op: UnaryOp, x: f64) -> f64 {
    match op {
        Negate => -x,
        Abs => x.abs(),
        Sign if x.is_nan() => x,
        Sign => {
            if x == 0.0 {
                0.0
            } else {
                x.signum()
            }
        }
        Ceil => x.ceil(),
        Floor => x.floor(),
        // Half away from zero, and a zero result is +0, as Nx.BinaryBackend (:erlang.round).
        Round => x.round() + 0.0,
        Exp => x.exp(),
        Expm1 => x.exp_m1(),
        Log => x.ln(),
        Log1p => x.ln_1p(),
        Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Sin => x.sin(),
        Cos => x.cos(),
        Tan => x.tan(),
        Sinh => x.sinh(),
        Cosh => x.cosh(),
        Tanh => x.tanh(),
        Asin => x.asin(),
        Acos => x.acos(),
        Atan => x.atan(),
        Asinh => x.asinh(),
        Acosh => x.acosh(),
        Atanh => x.atanh(),
        Sqrt => x.sqrt(),
        Rsqrt => 1.0 / x.sqrt(),
        Cbrt => x.cbrt(),
        Erf => erf_ref(x),
        Erfc => erfc_ref(x),
        ErfInv => erf_inv_ref(x),
        IsNan => x.is_nan() as u8 as f64,
        IsInfinity => x.is_infinite() as u8 as f64,
        Identity | Conjugate => x,
        Zero | Imag => 0.0,
        BitwiseNot | CountLeadingZeros | PopulationCount => unreachable!(),
    }
}

type Domain = (f64, f64, bool, bool);

/// (domain, relative tolerance, absolute tolerance) per f32 op; a domain is (lo, hi,
/// log-uniform magnitude?, random sign?). Where the driver's built-in decides the
/// accuracy the tolerance follows the Vulkan precision table, e.g. exp (3 + 2|x|) ulp,
/// log 3 ulp or 2^-21 absolute in [0.5, 2], asin/acos/atan 4096 ulp.
const TOLERANCES: &[(UnaryOp, Domain, f64, f64)] = &[
    (Exp, (-87.0, 88.0, false, false), 1.1e-5, 0.0),
    (Expm1, (1e-8, 10.0, true, true), 4e-6, 0.0),
    (Log, (1e-30, 1e30, true, false), 4e-7, 5e-7),
    (Log, (0.5, 2.0, false, false), 4e-7, 5e-7),
    (Log1p, (1e-8, 1e10, true, false), 2e-6, 0.0),
    (Log1p, (-0.999, 0.0, false, false), 2e-6, 0.0),
    (Sigmoid, (-30.0, 30.0, false, false), 5e-6, 0.0),
    (Sin, (-10.0, 10.0, false, false), 0.0, 2e-6),
    (Cos, (-10.0, 10.0, false, false), 0.0, 2e-6),
    (Tan, (-1.4, 1.4, false, false), 4e-6, 1e-7),
    (Sinh, (1e-8, 20.0, true, true), 5e-6, 0.0),
    (Cosh, (-20.0, 20.0, false, false), 5e-6, 0.0),
    (Tanh, (1e-8, 10.0, true, true), 4e-6, 0.0),
    (Asin, (-1.0, 1.0, false, false), 5e-4, 1e-7),
    (Acos, (-1.0, 1.0, false, false), 5e-4, 1e-7),
    (Atan, (1e-6, 1e4, true, true), 4e-5, 0.0),
    (Asinh, (1e-8, 1e4, true, true), 4e-6, 0.0),
    (Acosh, (1.0, 1e4, false, false), 4e-6, 0.0),
    (Acosh, (1.0, 1.01, false, false), 4e-6, 0.0),
    (Atanh, (1e-8, 0.999, true, true), 4e-6, 0.0),
    (Sqrt, (1e-30, 1e30, true, false), 1.2e-7, 0.0),
    (Rsqrt, (1e-30, 1e30, true, false), 2.4e-7, 0.0),
    (Cbrt, (1e-30, 1e30, true, true), 2.4e-7, 0.0),
    (Erf, (-5.0, 5.0, false, false), 0.0, 1e-6),
    (Erfc, (-3.0, 9.0, false, false), 2e-5, 0.0),
    (ErfInv, (-1.0, 1.0, false, false), 2e-6, 1e-7),
    (ErfInv, (1e-7, 0.5, true, true), 2e-6, 0.0),
];

/// Inputs every f32 op sees besides its domain: the IEEE specials and rounding cases.
const SPECIALS: [f32; 16] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    2.5,
    -2.5,
    1.5,
    0.49999997,
    -0.49999997,
    8388609.0,
    1e-6,
];

/// `start` filled up to `n` inputs drawn from `domain` (uniform or log-uniform
/// magnitude, a random sign where the domain mirrors).
fn domain_inputs(mut x: Vec<f32>, domain: Domain, n: usize, rng: &mut Rng) -> Vec<f32> {
    let (lo, hi, log, mirror) = domain;
    while x.len() < n {
        let v = if log {
            rng.log_uniform(lo, hi)
        } else {
            rng.uniform(lo, hi)
        };
        let v = if mirror && rng.next_u32().is_multiple_of(2) {
            -v
        } else {
            v
        };
        x.push(v as f32);
    }
    x
}

#[test]
fn f32_math_within_documented_tolerance() {
    let mut rng = Rng::new(20);
    let n = 2000;
    let mut failures = Vec::new();
    for &(op, domain, rel, abs) in TOLERANCES {
        let (lo, hi, _, _) = domain;
        let mut x = domain_inputs(SPECIALS.to_vec(), domain, n, &mut rng);
        if op == ErfInv {
            x.extend((1..24).map(|k| 1.0 - 2f32.powi(-k)));
        }
        let t = upload(&[x.len()], DType::F32, &x);
        let got: Vec<f32> = download(&unary(op, &t, DType::F32).unwrap());
        let (mut worst, mut worst_rel, mut at) = (0f64, 0f64, 0usize);
        for (i, (&v, &g)) in x.iter().zip(&got).enumerate() {
            let w = f64_ref(op, v as f64);
            let g = g as f64;
            let err = if w.is_nan() {
                if g.is_nan() {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else if w.is_infinite() || g.is_infinite() {
                if g == w {
                    0.0
                } else {
                    f64::INFINITY
                }
            } else {
                (g - w).abs() / (abs + rel * w.abs())
            };
            if w.is_finite() && w != 0.0 && g.is_finite() {
                worst_rel = worst_rel.max((g - w).abs() / w.abs());
            }
            if err > worst {
                (worst, at) = (err, i);
            }
        }
        let (v, g) = (x[at], got[at]);
        eprintln!("{op:?} on [{lo:e}, {hi:e}]: max rel err {worst_rel:.2e}; worst {v:e} -> {g:e} ({worst:.2} of tolerance)");
        if worst > 1.0 {
            failures.push(format!(
                "{op:?}({v:e}) = {g:e}, want {:e}",
                f64_ref(op, v as f64)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "outside tolerance:\n{}",
        failures.join("\n")
    );
}

/// f32 math computed in double and rounded once gives Nx.BinaryBackend's f32 values:
/// every result is the f64 reference rounded to f32, except where the reference lies so
/// close to the midpoint between two f32 values (2^-40 relative; erfc's reference is
/// 1 - erf up to 2.5, good to 1e-11 there) that a last-bit difference of the double is
/// allowed to decide. erf_inv is Nx's own f32 formula (Giles), not the exact inverse.
#[test]
fn f32_math_in_double_is_rounded_once() {
    if !f32_math_in_double() {
        eprintln!("skipped: f32 math uses the driver's built-ins on this run");
        return;
    }
    let mut rng = Rng::new(22);
    let mut failures = Vec::new();
    let edges = [
        88.72283,
        88.72284,
        -87.33654,
        -103.97208,
        -104.0,
        -150.0,
        1e-30,
        -1e-30,
        1e-45,
        0.35,
        -0.35,
        2.0,
        -2.0,
        4.5,
        10.5,
        0.99999994,
        -0.99999994,
        268435460.0,
    ];
    for &(op, domain, _, _) in TOLERANCES {
        if op == ErfInv {
            continue;
        }
        let start = SPECIALS.iter().chain(&edges).copied().collect();
        let x = domain_inputs(start, domain, 4000, &mut rng);
        let near = if op == Erfc { 1e-11 } else { 2f64.powi(-40) };
        let t = upload(&[x.len()], DType::F32, &x);
        let got: Vec<f32> = download(&unary(op, &t, DType::F32).unwrap());
        let what = format!("{op:?}");
        failures.extend(not_rounded_once(&x, &got, |v| f64_ref(op, v), near, &what));
    }
    assert!(
        failures.is_empty(),
        "{} results not the double rounded once:\n{}",
        failures.len(),
        failures
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn f32_exact_ops() {
    let mut rng = Rng::new(21);
    let mut x: Vec<f32> = SPECIALS.to_vec();
    x.extend([
        1e-45, -1e-45, 3.5, -3.5, 4.5, 16777215.0, -8388608.5, 0.50000006,
    ]);
    x.extend(rng.f32s(500, -100.0, 100.0));
    x.extend((0..200).map(|_| f32::from_bits(rng.next_u32())));
    let t = upload(&[x.len()], DType::F32, &x);
    for op in [Negate, Abs, Sign, Ceil, Floor, Round, Identity, Zero] {
        let got: Vec<f32> = download(&unary(op, &t, DType::F32).unwrap());
        for (i, &v) in x.iter().enumerate() {
            let w = f64_ref(op, v as f64) as f32;
            let ok = if w.is_nan() {
                got[i].is_nan()
            } else {
                got[i] == w
            };
            assert!(ok, "{op:?}({v:e}) = {:e}, want {w:e}", got[i]);
            // Sign of zero matters for the bit-moving ops.
            if matches!(op, Negate | Abs | Identity | Ceil | Floor | Round) && !w.is_nan() {
                assert_eq!(got[i].to_bits(), w.to_bits(), "{op:?}({v:e}) bits");
            }
        }
    }
    for op in [IsNan, IsInfinity] {
        let got: Vec<u8> = download(&unary(op, &t, DType::U8).unwrap());
        let want: Vec<u8> = x.iter().map(|&v| f64_ref(op, v as f64) as u8).collect();
        assert_eq!(got, want, "{op:?}");
    }
}

#[test]
fn every_named_op_is_reachable() {
    // real/conjugate of a real tensor are the identity, imag is zero.
    let x = [1.5f32, -2.0, f32::NAN];
    let t = upload(&[3], DType::F32, &x);
    for (name, op) in UNARY_OPS {
        let res = unary(op, &t, DType::F32);
        match op {
            BitwiseNot | CountLeadingZeros | PopulationCount => {
                assert!(matches!(res, Err(Error::Unsupported(_))), "{name} on f32")
            }
            Identity | Conjugate => assert_eq!(
                download::<u32>(&res.unwrap()),
                bytes(&x)
                    .chunks(4)
                    .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
                    .collect::<Vec<_>>(),
                "{name}"
            ),
            Zero | Imag => assert_eq!(download::<f32>(&res.unwrap()), vec![0.0; 3], "{name}"),
            _ => assert!(res.is_ok(), "{name} on f32"),
        }
    }
}

#[test]
fn f64_ops_run_in_f64_and_bitwise_ones_are_unsupported() {
    let x: Vec<f64> = vec![
        2.0,
        0.25,
        -3.5,
        2.5,
        -0.0,
        f64::INFINITY,
        f64::NAN,
        1e-300,
        1e300,
        7.0,
    ];
    let t = upload(&[x.len()], DType::F64, &x);
    for (name, op) in UNARY_OPS {
        let res = unary(op, &t, DType::F64);
        let exact = matches!(
            op,
            Negate | Abs | Sign | Ceil | Floor | Round | Sqrt | Rsqrt | Identity | Zero
        );
        if exact {
            let got: Vec<f64> = download(&res.unwrap_or_else(|e| panic!("{name}: {e}")));
            for (i, &v) in x.iter().enumerate() {
                let w = f64_ref(op, v);
                let ok = if w.is_nan() {
                    got[i].is_nan()
                } else if exact || w.is_infinite() {
                    got[i] == w
                } else {
                    (got[i] - w).abs() <= 4.0 * f64::EPSILON * w.abs()
                };
                assert!(ok, "{name}({v:e}) on f64 = {:e}, want {w:e}", got[i]);
            }
        } else if matches!(op, IsNan | IsInfinity) {
            let got: Vec<u8> = download(&unary(op, &t, DType::U8).unwrap());
            assert_eq!(
                got,
                x.iter().map(|&v| f64_ref(op, v) as u8).collect::<Vec<_>>(),
                "{name}"
            );
        } else if matches!(op, BitwiseNot | CountLeadingZeros | PopulationCount) {
            // No bitwise ops on floats: an error, never a wrong result.
            assert!(
                matches!(res, Err(Error::Unsupported(_))),
                "{name} on f64 should be Unsupported"
            );
        } else {
            // f64 math runs in f64 (never f32): within 2 ulp of the host's libm here
            // (the erf references above are plain double series, good to ~1e-14), and
            // correctly rounded against mpmath's values in tests/math64.rs.
            let rel = if matches!(op, Erf | Erfc | ErfInv) {
                1e-13
            } else {
                2.0 * f64::EPSILON
            };
            let got: Vec<f64> = download(&res.unwrap_or_else(|e| panic!("{name}: {e}")));
            for (i, &v) in x.iter().enumerate() {
                let w = f64_ref(op, v);
                // erf_inv_ref bisects to 2^-200 absolute: check erf(result) instead.
                let inverse_ok = op == ErfInv
                    && got[i].is_finite()
                    && (erf_ref(got[i]) - v).abs() <= rel * v.abs();
                let ok = (w.is_nan() && got[i].is_nan())
                    || got[i] == w
                    || inverse_ok
                    || (got[i] - w).abs() <= rel * w.abs();
                assert!(ok, "{name}({v:e}) on f64 = {:e}, want {w:e}", got[i]);
            }
        }
    }
}

/// Reference for integer unary ops in type `d` (values as i128 in the type's range).
fn int_unary_ref(op: UnaryOp, v: i128, d: DType) -> i128 {
    let bits = d.bits() as u32;
    let unsigned = (v as u128) & ((1u128 << bits) - 1);
    let wrap = |r: i128| {
        let m = r.rem_euclid(1i128 << bits);
        if d.is_signed_int() && m >= 1i128 << (bits - 1) {
            m - (1i128 << bits)
        } else {
            m
        }
    };
    match op {
        Negate => wrap(-v),
        Abs => wrap(v.abs()),
        Sign => v.signum(),
        BitwiseNot => wrap(!v),
        CountLeadingZeros => (unsigned.leading_zeros() - (128 - bits)) as i128,
        PopulationCount => unsigned.count_ones() as i128,
        Ceil | Floor | Round | Identity => v,
        IsNan | IsInfinity | Zero => 0,
        _ => unreachable!(),
    }
}

#[test]
fn integer_unary_ops_are_exact() {
    let mut rng = Rng::new(22);
    for d in [
        DType::S8,
        DType::U8,
        DType::S16,
        DType::S32,
        DType::U32,
        DType::S64,
        DType::U64,
    ] {
        let bits = d.bits() as u32;
        let (lo, hi) = if d.is_signed_int() {
            (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
        } else {
            (0, (1i128 << bits) - 1)
        };
        let mut v: Vec<i128> = vec![lo, hi, 0, 1, lo + 1, hi - 1, 2, 3, 255, 256];
        // Every magnitude (so every leading-zero count), wrapped into the type.
        let wrap = |r: i128| {
            let m = r.rem_euclid(1i128 << bits);
            if d.is_signed_int() && m > hi {
                m - (1i128 << bits)
            } else {
                m
            }
        };
        v.extend((0..300).map(|i| (rng.next_u64() >> (i % 64)) as i128));
        let v: Vec<i128> = v.into_iter().map(wrap).collect();
        let enc: Vec<u8> = v
            .iter()
            .flat_map(|&x| (x as u64).to_le_bytes()[..d.size()].to_vec())
            .collect();
        let t = Tensor::from_bytes(&[v.len()], d, &enc).unwrap();
        for op in [
            Negate,
            Abs,
            Sign,
            BitwiseNot,
            CountLeadingZeros,
            PopulationCount,
            Ceil,
            Floor,
            Round,
            Identity,
            Zero,
            IsNan,
            IsInfinity,
        ] {
            let out = if matches!(op, IsNan | IsInfinity) {
                DType::U8
            } else {
                d
            };
            let r = unary(op, &t, out).unwrap_or_else(|e| panic!("{op:?} on {d:?}: {e}"));
            let b = r.to_bytes().unwrap();
            for (i, c) in b.chunks(out.size()).enumerate() {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                let raw = u64::from_le_bytes(w) as i128;
                let want = int_unary_ref(op, v[i], d);
                let want_raw = want.rem_euclid(1i128 << (out.bits() as u32));
                assert_eq!(raw, want_raw, "{op:?} on {d:?} of {}", v[i]);
            }
        }
        for op in [Exp, Sin, Sqrt, Erf] {
            assert!(
                matches!(unary(op, &t, d), Err(Error::Unsupported(_))),
                "{op:?} on {d:?} into {d:?}"
            );
        }
    }
}

#[test]
fn integer_inputs_to_float_math() {
    // Nx gives exp(s32), sqrt(u8)... an f32 result: the kernel converts on load.
    let v: Vec<i32> = (-20..20).collect();
    let got: Vec<f32> = download(&unary(Exp, &upload(&[40], DType::S32, &v), DType::F32).unwrap());
    let want: Vec<f64> = v.iter().map(|&x| (x as f64).exp()).collect();
    assert_close(&got, &want, 2e-6, 0.0, "exp(s32)");
    let u: Vec<u8> = (0..=255).collect();
    let got: Vec<f32> = download(&unary(Sqrt, &upload(&[256], DType::U8, &u), DType::F32).unwrap());
    assert_eq!(
        got,
        u.iter().map(|&x| (x as f32).sqrt()).collect::<Vec<_>>(),
        "sqrt(u8)"
    );
}

/// A 16-bit float type and its reference conversions.
struct Half {
    ty: DType,
    decode: fn(u16) -> f64,
    /// f64 rounded once to the type.
    once: fn(f64) -> u16,
    /// f32 rounded to the type (a second rounding after f64 -> f32).
    from_f32: fn(f32) -> u16,
}

type Reference = fn(f64) -> f64;

/// f16 and bf16 math is computed in double and rounded once to the type, as Nx does:
/// every finite f16 (and every 16th bf16) through exp, log, tanh and atan against the f64
/// reference rounded once. Some of these results lie so near a tie of the narrow type that
/// rounding to f32 first would land on the tie (the test counts them).
#[test]
fn f16_and_bf16_math_rounds_once() {
    if !f32_math_in_double() {
        return; // the built-ins compute in f32 (README's type table)
    }
    let ops: [(UnaryOp, Reference); 4] = [
        (Exp, f64::exp),
        (Log, f64::ln),
        (Tanh, f64::tanh),
        (Atan, f64::atan),
    ];
    let types = [
        Half {
            ty: DType::F16,
            decode: f16_to_f64,
            once: f16_bits_from_f64,
            from_f32: f16_bits_ref,
        },
        Half {
            ty: DType::BF16,
            decode: bf16_to_f64,
            once: bf16_bits_from_f64,
            from_f32: bf16_bits_ref,
        },
    ];
    let mut traps = 0;
    for h in &types {
        let step = if h.ty == DType::F16 { 1 } else { 16 };
        let xs: Vec<u16> = (0..=0xFFFFu16)
            .step_by(step)
            .filter(|&b| (h.decode)(b).is_finite())
            .collect();
        let t = upload(&[xs.len()], h.ty, &xs);
        for (op, f) in ops {
            let got: Vec<u16> = download(&unary(op, &t, h.ty).unwrap());
            for (&x, &g) in xs.iter().zip(&got) {
                let (x, g) = ((h.decode)(x), (h.decode)(g));
                let exact = f(x);
                if exact.is_nan() {
                    assert!(g.is_nan(), "{:?} {op:?}({x:e}) = {g:e}", h.ty);
                    continue;
                }
                let want = (h.once)(exact);
                traps += ((h.from_f32)(exact as f32) != want) as usize;
                let w = (h.decode)(want);
                assert!(
                    g == w || (g == 0.0 && w == 0.0 && g.signum() == w.signum()),
                    "{:?} {op:?}({x:e}): got {g:e} want {w:e}",
                    h.ty
                );
            }
        }
    }
    println!("results where rounding through f32 would differ: {traps}");
    assert!(traps > 0);
}
