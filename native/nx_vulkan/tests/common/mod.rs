//! Shared by the integration tests: byte conversion, a deterministic PRNG, half-precision
//! references and a CPU reference of the strided index math (row-major, Nx semantics).
//! Nothing here calls engine code except `upload`/`download` and `matmul`'s products.
#![allow(dead_code)]

use nx_vulkan::{DType, Tensor};

pub mod codegen;
pub mod complex;
pub mod complex_math;
pub mod erf;
pub mod matmul;
pub mod rounding;

// ---------------------------------------------------------------- bytes <-> values

/// A plain element type with a little-endian byte form.
pub trait Elem: Copy + PartialEq + std::fmt::Debug + Send + Sync + 'static {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}

macro_rules! elem {
    ($($t:ty),*) => {$(
        impl Elem for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().unwrap())
            }
        }
    )*};
}
elem!(u8, i8, u16, i16, u32, i32, u64, i64, f32, f64);

pub fn bytes<T: Elem>(v: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(v.len() * T::SIZE);
    for &x in v {
        x.put(&mut out);
    }
    out
}

pub fn values<T: Elem>(b: &[u8]) -> Vec<T> {
    assert_eq!(
        b.len() % T::SIZE,
        0,
        "byte length not a multiple of the element size"
    );
    b.chunks_exact(T::SIZE).map(T::get).collect()
}

/// A tensor holding `v` (checked against the shape and the dtype's width).
pub fn upload<T: Elem>(shape: &[usize], dtype: DType, v: &[T]) -> Tensor {
    assert_eq!(dtype.size(), T::SIZE, "host type does not match {dtype:?}");
    assert_eq!(numel(shape), v.len(), "data does not match shape {shape:?}");
    Tensor::from_bytes(shape, dtype, &bytes(v)).expect("upload")
}

/// The tensor's elements (checked against the dtype's width).
pub fn download<T: Elem>(t: &Tensor) -> Vec<T> {
    assert_eq!(
        t.dtype.size(),
        T::SIZE,
        "host type does not match {:?}",
        t.dtype
    );
    let b = t.to_bytes().expect("download");
    assert_eq!(b.len(), numel(&t.shape) * T::SIZE, "downloaded byte count");
    values(&b)
}

// ---------------------------------------------------------------- PRNG

/// SplitMix64: tiny, deterministic, good enough to pick test inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }
    /// Uniform in [0, 1).
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    /// Log-uniform in [lo, hi) (both positive).
    pub fn log_uniform(&mut self, lo: f64, hi: f64) -> f64 {
        (lo.ln() + (hi.ln() - lo.ln()) * self.unit()).exp()
    }
    /// Uniform integer in [lo, hi] (inclusive).
    pub fn int(&mut self, lo: i64, hi: i64) -> i64 {
        let span = (hi as i128 - lo as i128 + 1) as u128;
        (lo as i128 + (self.next_u64() as u128 % span) as i128) as i64
    }
    pub fn f32s(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f32> {
        (0..n).map(|_| self.uniform(lo, hi) as f32).collect()
    }
    pub fn ints(&mut self, n: usize, lo: i64, hi: i64) -> Vec<i64> {
        (0..n).map(|_| self.int(lo, hi)).collect()
    }
}

// ---------------------------------------------------------------- f16 / bf16 references

pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-24),
        31 if man == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1024.0 + man) * 2f64.powi(exp - 25),
    }
}

pub fn bf16_to_f64(h: u16) -> f64 {
    f32::from_bits((h as u32) << 16) as f64
}

/// Nearest representable value by binary search over the (monotonic) positive bit
/// patterns `0..=max_finite`; the pattern after `max_finite` is infinity, which for
/// rounding counts as the next power of two (`overflow`). Ties go to the even pattern.
fn nearest_bits(x: f64, max_finite: u16, overflow: f64, decode: fn(u16) -> f64) -> u16 {
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    let (mut lo, mut hi) = (0u16, max_finite);
    if a >= overflow {
        return sign | (max_finite + 1);
    }
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if decode(mid) <= a {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    let below = decode(lo);
    let above = if lo == max_finite {
        overflow
    } else {
        decode(lo + 1)
    };
    let pick = if a - below < above - a {
        lo
    } else if a - below > above - a {
        lo + 1
    } else if lo % 2 == 0 {
        lo
    } else {
        lo + 1
    };
    sign | pick
}

/// f32 -> f16 bits, round to nearest even (independent of the engine's converter).
pub fn f16_bits_ref(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    nearest_bits(x as f64, 0x7bff, 65536.0, f16_to_f64)
}

/// f64 -> f16 bits, rounded once to nearest even (as Nx stores a double as f16).
pub fn f16_bits_from_f64(x: f64) -> u16 {
    if x.is_nan() {
        return 0x7e00;
    }
    nearest_bits(x, 0x7bff, 65536.0, f16_to_f64)
}

/// f64 -> bf16 bits as Nx.BinaryBackend stores a double: the nearest f32, then its top
/// 16 bits (toward zero).
pub fn bf16_bits_from_f64(x: f64) -> u16 {
    bf16_bits_ref(x as f32)
}

/// f32 -> bf16 bits as Nx stores them: the top 16 bits (toward zero), NaN as 0x7FC0.
pub fn bf16_bits_ref(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7fc0;
    }
    (x.to_bits() >> 16) as u16
}

// ---------------------------------------------------------------- float comparison

/// Distance in units in the last place between two finite f32 of the same sign region.
pub fn ulp_diff(a: f32, b: f32) -> u64 {
    let key = |x: f32| {
        let b = x.to_bits() as i64;
        if b < 0x8000_0000 {
            b
        } else {
            0x8000_0000 - b
        }
    };
    (key(a) - key(b)).unsigned_abs()
}

/// Checks `got` against reference values: NaN must match NaN, infinities must match
/// exactly, everything else within `abs + rel * |want|`.
pub fn assert_close(got: &[f32], want: &[f64], rel: f64, abs: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() || (w.abs() > f32::MAX as f64 * (1.0 + 2f64.powi(-24))) {
            g as f64 == w.signum() * f64::INFINITY
        } else {
            (g as f64 - w).abs() <= abs + rel * w.abs()
        };
        assert!(
            ok,
            "{what}: element {i}: got {g:e}, want {w:e} (rel {rel:e}, abs {abs:e})"
        );
    }
}

// ---------------------------------------------------------------- index math

pub fn numel(shape: &[usize]) -> usize {
    shape.iter().product()
}

/// Row-major element strides.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Multi-index of flat position `i`.
pub fn unravel(mut i: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        idx[d] = i % shape[d];
        i /= shape[d];
    }
    idx
}

/// Flat position of a multi-index.
pub fn ravel(idx: &[usize], shape: &[usize]) -> usize {
    idx.iter().zip(strides(shape)).map(|(i, s)| i * s).sum()
}

/// Nx transpose: output axis `j` is input axis `axes[j]`. Returns (shape, data).
pub fn transpose_ref<T: Copy>(data: &[T], shape: &[usize], axes: &[usize]) -> (Vec<usize>, Vec<T>) {
    let out_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
    let out = (0..numel(&out_shape))
        .map(|i| {
            let o = unravel(i, &out_shape);
            let mut idx = vec![0; shape.len()];
            for (j, &a) in axes.iter().enumerate() {
                idx[a] = o[j];
            }
            data[ravel(&idx, shape)]
        })
        .collect();
    (out_shape, out)
}

/// Nx broadcast(t, out_shape, axes): input axis `i` is output axis `axes[i]`.
pub fn broadcast_ref<T: Copy>(
    data: &[T],
    shape: &[usize],
    out_shape: &[usize],
    axes: &[usize],
) -> Vec<T> {
    (0..numel(out_shape))
        .map(|i| {
            let o = unravel(i, out_shape);
            let idx: Vec<usize> = shape
                .iter()
                .zip(axes)
                .map(|(&d, &a)| if d == 1 { 0 } else { o[a] })
                .collect();
            data[ravel(&idx, shape)]
        })
        .collect()
}

/// Flat input position read for output multi-index `o` under numpy's right-aligned
/// broadcasting of `shape` to the output rank.
pub fn numpy_index(o: &[usize], shape: &[usize]) -> usize {
    let lead = o.len() - shape.len();
    let idx: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &d)| if d == 1 { 0 } else { o[lead + i] })
        .collect();
    ravel(&idx, shape)
}

/// Folds `data` over `axes` in row-major order. Returns (output shape, values).
pub fn reduce_ref<T: Copy, A: Copy>(
    data: &[T],
    shape: &[usize],
    axes: &[usize],
    keep: bool,
    init: A,
    f: impl Fn(A, T) -> A,
) -> (Vec<usize>, Vec<A>) {
    let out_shape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter_map(|(i, &d)| match (axes.contains(&i), keep) {
            (false, _) => Some(d),
            (true, true) => Some(1),
            (true, false) => None,
        })
        .collect();
    let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
    let kept_shape: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
    let mut out = vec![init; numel(&out_shape)];
    for (i, &x) in data.iter().enumerate() {
        let idx = unravel(i, shape);
        let k: Vec<usize> = kept.iter().map(|&a| idx[a]).collect();
        let o = ravel(&k, &kept_shape);
        out[o] = f(out[o], x);
    }
    (out_shape, out)
}

/// Every permutation of `0..n`, in lexicographic order.
pub fn permutations(n: usize) -> Vec<Vec<usize>> {
    fn go(prefix: &mut Vec<usize>, n: usize, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == n {
            out.push(prefix.clone());
            return;
        }
        for a in 0..n {
            if !prefix.contains(&a) {
                prefix.push(a);
                go(prefix, n, out);
                prefix.pop();
            }
        }
    }
    let mut out = Vec::new();
    go(&mut Vec::new(), n, &mut out);
    out
}
