//! Generated kernels (src/codegen) against the static kernels: every unary and binary op
//! that a group accepts, in every class, run as a one-op generated kernel gives the bytes
//! of `ops::elementwise` on the same special and random values (NaN as any NaN: both
//! store Nx's one pattern through `store_elem`, but the static fast paths store the
//! hardware's); chains of ops with broadcast and transposed views give the bytes of the
//! ops run one by one; `Group::check` refuses what would round differently; every module
//! passes spirv-val.

mod common;

use common::codegen::{assert_same, spirv_val};
use nx_vulkan::codegen::{self, Group, Node, View};
use nx_vulkan::ops::elementwise::{binary, unary, BinaryOp, UnaryOp, BINARY_OPS, UNARY_OPS};
use nx_vulkan::ops::layout::contiguous_strides;
use nx_vulkan::{DType, Error, Tensor};

const CLASSES: [DType; 6] = [
    DType::F32,
    DType::F64,
    DType::S32,
    DType::U32,
    DType::S64,
    DType::U64,
];

/// A deterministic stream of 64-bit words (SplitMix64).
struct Bits(u64);

impl Bits {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// `n` elements of `dtype`'s bytes: its special values first (zeros, subnormals, NaN,
/// infinities, extremes, small integers), then random bit patterns and small values.
fn sample(dtype: DType, n: usize, seed: u64) -> Vec<u8> {
    let mut bits = Bits(seed);
    let mut out = Vec::with_capacity(n * dtype.size());
    let specials: Vec<u64> = match dtype {
        DType::F32 => [
            0.0f32,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            3.0,
            -7.5,
            1e-40,
            -1e-40,
            1.17e-38,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            33.0,
            31.0,
            0.1,
        ]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect(),
        DType::F64 => [
            0.0f64,
            -0.0,
            1.0,
            -1.0,
            0.5,
            2.0,
            3.0,
            -7.5,
            1e-310,
            -1e-310,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            63.0,
            64.0,
            0.1,
        ]
        .iter()
        .map(|v| v.to_bits())
        .collect(),
        _ => {
            let w = dtype.bits() as u32;
            let max = if w == 64 { u64::MAX } else { (1u64 << w) - 1 };
            vec![
                0,
                1,
                2,
                3,
                31,
                32,
                33,
                63,
                64,
                max,
                max - 1,
                max >> 1,
                (max >> 1) + 1,
                7,
                100,
            ]
        }
    };
    for k in 0..n {
        let v = if k < specials.len() {
            specials[k]
        } else if k % 3 == 0 {
            // Small values: shifts, comparisons and powers that stay in range.
            match dtype {
                DType::F32 => ((bits.next() % 200) as f32 / 8.0 - 12.0).to_bits() as u64,
                DType::F64 => ((bits.next() % 200) as f64 / 8.0 - 12.0).to_bits(),
                _ => bits.next() % 40,
            }
        } else {
            bits.next()
        };
        out.extend_from_slice(&v.to_le_bytes()[..dtype.size()]);
    }
    out
}

fn tensor(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_bytes(shape, dtype, &sample(dtype, n, seed)).expect("upload")
}

fn contiguous(dtype: DType, shape: &[usize]) -> View {
    View {
        dtype,
        strides: contiguous_strides(shape),
        offset: 0,
    }
}

/// The Nx result type of a binary op on two `t` operands.
fn binary_out(op: BinaryOp, t: DType) -> DType {
    let predicate = matches!(
        op,
        BinaryOp::Equal
            | BinaryOp::NotEqual
            | BinaryOp::Greater
            | BinaryOp::Less
            | BinaryOp::GreaterEqual
            | BinaryOp::LessEqual
            | BinaryOp::LogicalAnd
            | BinaryOp::LogicalOr
            | BinaryOp::LogicalXor
    );
    if predicate {
        DType::U8
    } else if matches!(op, BinaryOp::Divide | BinaryOp::Atan2) && t.is_int() {
        DType::F32
    } else {
        t
    }
}

#[test]
fn one_op_kernels_give_the_bytes_of_the_static_kernels() {
    let shape = [3, 97];
    let mut generated = Vec::new();
    for t in CLASSES {
        let a = tensor(t, &shape, 1);
        let b = tensor(t, &shape, 2);
        for (name, op) in BINARY_OPS {
            let out = binary_out(op, t);
            let group = Group {
                reduce_axes: vec![],
                shape: shape.to_vec(),
                inputs: vec![contiguous(t, &shape), contiguous(t, &shape)],
                nodes: vec![Node::Input(0), Node::Input(1), Node::Binary(op, 0, 1, out)],
                outputs: vec![2],
            };
            if group.check().is_err() {
                continue;
            }
            let what = format!("{name} on {}", t.name());
            spirv_val(&codegen::spirv(&group).unwrap(), &what);
            let got = codegen::run(&group, &[&a, &b]).unwrap();
            let want = binary(op, &a, &b, &shape, out).unwrap();
            assert_same(&what, out, &got[0], &want);
            generated.push(what);
        }
        for (name, op) in UNARY_OPS {
            let out = if matches!(op, UnaryOp::IsNan | UnaryOp::IsInfinity) {
                DType::U8
            } else {
                t
            };
            let group = Group {
                reduce_axes: vec![],
                shape: shape.to_vec(),
                inputs: vec![contiguous(t, &shape)],
                nodes: vec![Node::Input(0), Node::Unary(op, 0, out)],
                outputs: vec![1],
            };
            if group.check().is_err() {
                continue;
            }
            let what = format!("{name} on {}", t.name());
            spirv_val(&codegen::spirv(&group).unwrap(), &what);
            let got = codegen::run(&group, &[&a]).unwrap();
            let want = unary(op, &a, out).unwrap();
            assert_same(&what, out, &got[0], &want);
            generated.push(what);
        }
    }
    // The ops every class generates (the others run library kernels or need conversions).
    for t in CLASSES {
        for op in [
            "add", "subtract", "multiply", "min", "max", "less", "equal", "negate", "abs",
        ] {
            let what = format!("{op} on {}", t.name());
            assert!(generated.contains(&what), "{what} was not generated");
        }
    }
    for what in [
        "divide on f32",
        "sqrt on f64",
        "bitwise_and on s64",
        "left_shift on u32",
        "floor on f32",
    ] {
        assert!(
            generated.contains(&what.to_string()),
            "{what} was not generated"
        );
    }
    eprintln!("{} one-op kernels generated", generated.len());
}

/// A dense layer's forward and ReLU gradient in one kernel, against the ops one by one:
/// y = max(x * w + b, 0) with `b` broadcast over rows and `w` read transposed, and
/// g = (x * w + b > 0) * dy, two outputs.
#[test]
fn chains_with_views_give_the_bytes_of_the_ops_one_by_one() {
    let f = DType::F32;
    let (rows, cols) = (33, 70);
    let shape = [rows, cols];
    let x = tensor(f, &shape, 3);
    let wt = tensor(f, &[cols, rows], 4); // w = wt transposed
    let bias = tensor(f, &[cols], 5);
    let dy = tensor(f, &shape, 6);
    let zero = Tensor::from_bytes(&[1], f, &0.0f32.to_le_bytes()).unwrap();
    let group = Group {
        reduce_axes: vec![],
        shape: shape.to_vec(),
        inputs: vec![
            contiguous(f, &shape),
            View {
                dtype: f,
                strides: vec![1, rows as isize],
                offset: 0,
            },
            View {
                dtype: f,
                strides: vec![0, 1],
                offset: 0,
            },
            contiguous(f, &shape),
            View {
                dtype: f,
                strides: vec![0, 0],
                offset: 0,
            },
        ],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Input(2),
            Node::Input(3),
            Node::Input(4),
            Node::Binary(BinaryOp::Multiply, 0, 1, f),
            Node::Binary(BinaryOp::Add, 5, 2, f),
            Node::Binary(BinaryOp::Max, 6, 4, f),
            Node::Binary(BinaryOp::Greater, 6, 4, DType::U8),
            Node::Binary(BinaryOp::Multiply, 8, 3, f),
        ],
        outputs: vec![7, 9],
    };
    spirv_val(&codegen::spirv(&group).unwrap(), "dense layer");
    let got = codegen::run(&group, &[&x, &wt, &bias, &dy, &zero]).unwrap();

    let w = nx_vulkan::ops::shape::transpose(&wt, &[1, 0]).unwrap();
    let xw = binary(BinaryOp::Multiply, &x, &w, &shape, f).unwrap();
    let z = binary(BinaryOp::Add, &xw, &bias, &shape, f).unwrap();
    let y = binary(BinaryOp::Max, &z, &zero, &shape, f).unwrap();
    let positive = binary(BinaryOp::Greater, &z, &zero, &shape, DType::U8).unwrap();
    let g = binary(BinaryOp::Multiply, &positive, &dy, &shape, f).unwrap();
    assert_same("y", f, &got[0], &y);
    assert_same("g", f, &got[1], &g);
}

#[test]
fn integer_chains_wrap_as_the_ops_one_by_one() {
    let t = DType::S64;
    let shape = [5, 41];
    let (a, b) = (tensor(t, &shape, 7), tensor(t, &shape, 8));
    let group = Group {
        reduce_axes: vec![],
        shape: shape.to_vec(),
        inputs: vec![contiguous(t, &shape), contiguous(t, &shape)],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Multiply, 0, 1, t),
            Node::Binary(BinaryOp::Quotient, 2, 0, t),
            Node::Binary(BinaryOp::BitwiseXor, 3, 1, t),
            Node::Unary(UnaryOp::Negate, 4, t),
        ],
        outputs: vec![5],
    };
    let got = codegen::run(&group, &[&a, &b]).unwrap();
    let p = binary(BinaryOp::Multiply, &a, &b, &shape, t).unwrap();
    let q = binary(BinaryOp::Quotient, &p, &a, &shape, t).unwrap();
    let x = binary(BinaryOp::BitwiseXor, &q, &b, &shape, t).unwrap();
    let want = unary(UnaryOp::Negate, &x, t).unwrap();
    assert_same("-((a * b) / a ^ b)", t, &got[0], &want);
}

#[test]
fn groups_that_would_round_differently_are_refused() {
    let f = DType::F32;
    let shape = vec![4];
    let two = |nodes: Vec<Node>, inputs: Vec<View>| Group {
        reduce_axes: vec![],
        shape: shape.clone(),
        inputs,
        outputs: vec![nodes.len() - 1],
        nodes,
    };
    // An f16 intermediate that another op reads: stored, it would round.
    let f16_result = two(
        vec![
            Node::Input(0),
            Node::Binary(BinaryOp::Add, 0, 0, DType::F16),
            Node::Unary(UnaryOp::Negate, 1, DType::F16),
        ],
        vec![contiguous(f, &shape)],
    );
    // exp of f32 on a device with f64 runs a library kernel; of f64 always.
    // (exp is the one math-library function generated so far.)
    let log_f64 = two(
        vec![Node::Input(0), Node::Unary(UnaryOp::Log, 0, DType::F64)],
        vec![contiguous(DType::F64, &shape)],
    );
    // An s32 input to an f32 op: the static kernel may compute it in f64.
    let int_input = two(
        vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Add, 0, 1, f),
        ],
        vec![contiguous(f, &shape), contiguous(DType::S32, &shape)],
    );
    // Two classes in one group.
    let mixed = two(
        vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Add, 0, 0, f),
            Node::Binary(BinaryOp::Add, 1, 1, DType::F64),
        ],
        vec![contiguous(f, &shape), contiguous(DType::F64, &shape)],
    );
    // A u64 operand in the s64 class: binary.comp orders values at or above 2^63 apart.
    let big_u64 = two(
        vec![
            Node::Input(0),
            Node::Input(1),
            Node::Binary(BinaryOp::Min, 0, 1, DType::S64),
        ],
        vec![
            contiguous(DType::U64, &shape),
            contiguous(DType::S64, &shape),
        ],
    );
    // An s32 input stored as it is from an f32 group: it would round through f32.
    let lossy_copy = Group {
        reduce_axes: vec![],
        shape: shape.clone(),
        inputs: vec![contiguous(DType::S32, &shape), contiguous(f, &shape)],
        nodes: vec![
            Node::Input(0),
            Node::Input(1),
            Node::Unary(UnaryOp::Negate, 1, f),
        ],
        outputs: vec![0, 2],
    };
    // s64 -> f64 -> u8 (and f32 -> s64 -> f32): drivers fold the two conversions of one
    // kernel, which the unfused kernels keep apart (an out-of-range value would differ).
    let round_trip = two(
        vec![
            Node::Input(0),
            Node::Unary(UnaryOp::Identity, 0, DType::F64),
            Node::Unary(UnaryOp::Identity, 1, DType::U8),
        ],
        vec![contiguous(DType::S64, &shape)],
    );
    let float_round_trip = two(
        vec![
            Node::Input(0),
            Node::Unary(UnaryOp::Identity, 0, DType::S64),
            Node::Unary(UnaryOp::Negate, 1, DType::S64),
            Node::Unary(UnaryOp::Identity, 2, f),
        ],
        vec![contiguous(f, &shape)],
    );
    for group in [&round_trip, &float_round_trip] {
        let why = format!("{:?}", group.check());
        assert!(why.contains("round trip"), "{why}");
    }
    for (what, group) in [
        ("s64 -> f64 -> u8", round_trip),
        ("f32 -> s32 -> f32", float_round_trip),
        ("u64 in s64", big_u64),
        ("s32 input copied out of an f32 group", lossy_copy),
        ("f16 intermediate", f16_result),
        ("f64 log", log_f64),
        ("s32 input", int_input),
        ("two classes", mixed),
    ] {
        assert!(
            matches!(group.check(), Err(Error::Unsupported(_))),
            "{what}: {:?}",
            group.check()
        );
    }
}

#[test]
fn views_past_their_tensor_are_errors() {
    let f = DType::F32;
    let t = tensor(f, &[10], 9);
    let group = Group {
        reduce_axes: vec![],
        shape: vec![4, 3],
        inputs: vec![View {
            dtype: f,
            strides: vec![3, 1],
            offset: 0,
        }],
        nodes: vec![Node::Input(0), Node::Unary(UnaryOp::Negate, 0, f)],
        outputs: vec![1],
    };
    match codegen::run(&group, &[&t]) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("elements 0..=11"), "{m}"),
        Err(other) => panic!("{other:?}"),
        Ok(_) => panic!("a view past its tensor ran"),
    }
    // Strides past 32 bits: the kernels' index math is 32-bit.
    let wide = Group {
        reduce_axes: vec![],
        shape: vec![2],
        inputs: vec![View {
            dtype: f,
            strides: vec![1 << 33],
            offset: 0,
        }],
        ..group.clone()
    };
    assert!(matches!(
        codegen::run(&wide, &[&t]),
        Err(Error::Unsupported(_))
    ));
    let wrong_type = tensor(DType::F64, &[12], 9);
    assert!(matches!(
        codegen::run(&group, &[&wrong_type]),
        Err(Error::InvalidArgument(_))
    ));
}

/// The ReLU gradient as Nx's grad writes it, select(x > 0, dy, 0), with the constant in
/// the kernel, against the ops one by one; in f32 and s32.
#[test]
fn selects_and_constants_give_the_bytes_of_the_ops_one_by_one() {
    use nx_vulkan::ops::creation::{constant, Scalar};
    use nx_vulkan::ops::indexing::select;
    for t in [DType::F32, DType::S32, DType::F64] {
        let shape = [7, 45];
        let (x, dy) = (tensor(t, &shape, 10), tensor(t, &shape, 11));
        let zero_bits = 0u64;
        let group = Group {
            reduce_axes: vec![],
            shape: shape.to_vec(),
            inputs: vec![contiguous(t, &shape), contiguous(t, &shape)],
            nodes: vec![
                Node::Input(0),
                Node::Input(1),
                Node::Constant(zero_bits, t),
                Node::Binary(BinaryOp::Greater, 0, 2, DType::U8),
                Node::Select(3, 1, 2, t),
            ],
            outputs: vec![4],
        };
        let what = format!("relu gradient in {}", t.name());
        spirv_val(&codegen::spirv(&group).unwrap(), &what);
        let got = codegen::run(&group, &[&x, &dy]).unwrap();
        let zero = constant(&shape, t, Scalar::Int(0)).unwrap();
        let positive = binary(BinaryOp::Greater, &x, &zero, &shape, DType::U8).unwrap();
        let want = select(&positive, &dy, &zero, &shape, t).unwrap();
        assert_same(&what, t, &got[0], &want);
    }
    // A u8 constant in an f32 group: 3 * x.
    let f = DType::F32;
    let x = tensor(f, &[50], 12);
    let group = Group {
        reduce_axes: vec![],
        shape: vec![50],
        inputs: vec![contiguous(f, &[50])],
        nodes: vec![
            Node::Input(0),
            Node::Constant(3, DType::U8),
            Node::Binary(BinaryOp::Multiply, 1, 0, f),
        ],
        outputs: vec![2],
    };
    let got = codegen::run(&group, &[&x]).unwrap();
    let three = constant(&[50], DType::U8, Scalar::Int(3)).unwrap();
    let want = binary(BinaryOp::Multiply, &three, &x, &[50], f).unwrap();
    assert_same("3 * x", f, &got[0], &want);
}

/// Conversions at a group's ends: inputs of other types converted in (`as_type`, the
/// identity to the class's type), outputs converted out, against `as_type` and the ops
/// one by one: s16 -> f32 -> f16, u8 -> f32 -> s16 (saturating, NaN to 0), f64 -> f32,
/// s64 -> u8 (wrapping), f16 -> f32 -> bf16.
#[test]
fn conversions_at_the_ends_give_the_bytes_of_as_type() {
    use nx_vulkan::ops::elementwise::as_type;
    let shape = [4, 53];
    let cases: [(DType, DType, DType); 5] = [
        // (input type, class type, output type)
        (DType::S16, DType::F32, DType::F16),
        (DType::U8, DType::F32, DType::S16),
        (DType::F64, DType::F64, DType::F32),
        (DType::S64, DType::S64, DType::U8),
        (DType::F16, DType::F32, DType::BF16),
    ];
    for (from, mid, to) in cases {
        let x = tensor(from, &shape, 20);
        let y = tensor(mid, &shape, 21);
        // out = as_type(as_type(x, mid) * y + y, to)
        let group = Group {
            reduce_axes: vec![],
            shape: shape.to_vec(),
            inputs: vec![contiguous(from, &shape), contiguous(mid, &shape)],
            nodes: vec![
                Node::Input(0),
                Node::Input(1),
                Node::Unary(UnaryOp::Identity, 0, mid),
                Node::Binary(BinaryOp::Multiply, 2, 1, mid),
                Node::Binary(BinaryOp::Add, 3, 1, mid),
                Node::Unary(UnaryOp::Identity, 4, to),
            ],
            outputs: vec![5, 4],
        };
        let what = format!("{} -> {} -> {}", from.name(), mid.name(), to.name());
        group.check().unwrap_or_else(|e| panic!("{what}: {e:?}"));
        spirv_val(&codegen::spirv(&group).unwrap(), &what);
        let got = codegen::run(&group, &[&x, &y]).unwrap();
        let xm = as_type(&x, mid).unwrap();
        let p = binary(BinaryOp::Multiply, &xm, &y, &shape, mid).unwrap();
        let q = binary(BinaryOp::Add, &p, &y, &shape, mid).unwrap();
        let want = as_type(&q, to).unwrap();
        assert_same(&what, to, &got[0], &want);
        assert_same(&what, mid, &got[1], &q);
    }
}

/// Constants are push words of each launch: an s32 widened to s64 and compared with 0
/// and -1 gives the ops' bytes one by one (a constant folded into the kernel gave
/// `x > 0` for every x on lavapipe), and groups that differ only in their constants'
/// values share one kernel key.
#[test]
fn constants_are_push_words_of_each_launch() {
    use nx_vulkan::ops::creation::{constant, Scalar};
    use nx_vulkan::ops::elementwise::as_type;
    let shape = [3, 5];
    let x = tensor(DType::S32, &shape, 12);
    let wide = as_type(&x, DType::S64).unwrap();
    let group = |c: i64| Group {
        reduce_axes: vec![],
        shape: shape.to_vec(),
        inputs: vec![contiguous(DType::S32, &shape)],
        nodes: vec![
            Node::Input(0),
            Node::Unary(UnaryOp::Identity, 0, DType::S64),
            Node::Constant(c as u64, DType::S64),
            Node::Binary(BinaryOp::Greater, 1, 2, DType::U8),
        ],
        outputs: vec![3],
    };
    for c in [0i64, -1, 7] {
        let got = codegen::run(&group(c), &[&x]).unwrap();
        let c_t = constant(&shape, DType::S64, Scalar::Int(c as i128)).unwrap();
        let want = binary(BinaryOp::Greater, &wide, &c_t, &shape, DType::U8).unwrap();
        assert_same(&format!("s32 as s64 > {c}"), DType::U8, &got[0], &want);
    }
    // Pipelines are keyed by the group without its constants' values.
    assert_eq!(group(0).kernel_key(), group(-1).kernel_key());
    assert_ne!(group(0), group(-1));
}

#[test]
fn a_value_compared_with_itself_keeps_the_signs_of_zero_products() {
    // x * (x > x) and (x < x) * x: the compare is false whatever x is, so a driver knows
    // it while compiling; lavapipe then gave 0.0 for negative x where the ops one by one
    // give -0.0 (generated-kernel fuzz seed 200908416).
    for dtype in [DType::F32, DType::F64] {
        let x = tensor(dtype, &[40], 77);
        for (compare, swap) in [(BinaryOp::Greater, false), (BinaryOp::Less, true)] {
            let product = if swap {
                Node::Binary(BinaryOp::Multiply, 1, 0, dtype)
            } else {
                Node::Binary(BinaryOp::Multiply, 0, 1, dtype)
            };
            let group = Group {
                reduce_axes: vec![],
                shape: vec![40],
                inputs: vec![contiguous(dtype, &[40])],
                nodes: vec![
                    Node::Input(0),
                    Node::Binary(compare, 0, 0, DType::U8),
                    product,
                ],
                outputs: vec![2],
            };
            let got = codegen::run(&group, &[&x]).unwrap();
            let mask = binary(compare, &x, &x, &[40], DType::U8).unwrap();
            let (l, r) = if swap { (&mask, &x) } else { (&x, &mask) };
            let want = binary(BinaryOp::Multiply, l, r, &[40], dtype).unwrap();
            assert_same(&format!("{compare:?} in {dtype:?}"), dtype, &got[0], &want);
        }
    }
}
