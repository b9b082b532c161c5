//! Nx semantics: each function takes engine tensors plus the callback's arguments, checks
//! them, computes the output shape and type the way Nx does, and records kernel launches.
//! Nothing here waits for the GPU, except triangular_solve's check for a singular matrix.

pub mod chain;
pub mod complex;
pub mod complex_real;
pub mod conv;
pub mod copy;
pub mod creation;
pub mod dot;
pub mod elementwise;
pub mod fused;
pub mod indexing;
pub mod layout;
pub mod reduce;
pub mod scatter;
pub mod shape;
pub mod sort;
pub mod triangular;
pub mod window;

use crate::dtype::{Compute, DType};
use crate::engine::engine;
use crate::error::Result;
use crate::exec::Access;
use crate::kernels::{Kernel, Push};
use crate::memory::Block;
use crate::tensor::Tensor;
use std::sync::Arc;

/// Workgroup width of the element-wise kernels.
const GROUP: u64 = 256;
/// Largest group count per grid axis every Vulkan device accepts.
pub(crate) const MAX_GROUPS: u64 = 65535;

/// A 2-D grid for `threads` invocations of 256-wide groups. Kernels loop over what does
/// not fit (grid-stride), so any element count works within the 65,535-per-axis limit.
pub(crate) fn grid(threads: u64) -> [u32; 3] {
    grid_groups(threads.div_ceil(GROUP))
}

/// Most groups of a library kernel's grid (the f64 and exact-f32 math modules, F64Math
/// and F32ViaF64). The exact-f32 modules built on math32x.glsl (all but sin, cos, tan,
/// atan2 and erf_inv) first fill f32x_exp's table in shared memory in each group: a
/// group per 256 elements paid it 65,536 times for 2^24 of them (H200: an exact f32 exp
/// of 2^24 54 us capped, 127 uncapped; raw nvidia-h200-2026-12-02b). The others are
/// capped alike (2048 groups of 256 are two waves of an H200's 132 SMs); all of them
/// loop over the rest.
const LIBRARY_GROUPS: u64 = 2048;

/// The grid of an element-wise launch over `threads` invocations: `grid`'s, capped at
/// `LIBRARY_GROUPS` groups where the kernel is a library kernel.
pub(crate) fn element_grid(threads: u64, library: bool) -> [u32; 3] {
    let groups = threads.div_ceil(GROUP);
    grid_groups(if library {
        groups.min(LIBRARY_GROUPS)
    } else {
        groups
    })
}

/// A grid with one group per work item (rows of a reduction), same limits. Past 65,535
/// groups the rows are balanced (`x` = groups / `y`, rounded up) instead of full rows of
/// 65,535: those left up to 65,534 groups with nothing to do, and on the H200 an add of
/// 2^26 f32 (65,536 groups, half of a 2 x 65,535 grid idle) ran at 2,750 GB/s against
/// 4,000 at 2^25.
pub(crate) fn grid_groups(groups: u64) -> [u32; 3] {
    let g = groups.max(1);
    let y = g.div_ceil(MAX_GROUPS).min(MAX_GROUPS);
    let x = g.div_ceil(y).min(MAX_GROUPS);
    [x as u32, y as u32, 1]
}

/// `c`, widened to its 64-bit class when an operand is 64-bit: the 32-bit kernels are
/// built without 64-bit loads and would read an s64/u64/f64 element as 0. (On a device
/// without 64-bit support the widened kernel is then `Unsupported`, never wrong.)
pub(crate) fn loading(c: Compute, operands: &[DType]) -> Compute {
    if !operands.iter().any(|t| t.compute().is_64()) {
        return c;
    }
    match c {
        Compute::F32 => Compute::F64,
        Compute::I32 => Compute::I64,
        Compute::U32 => Compute::U64,
        wide => wide,
    }
}

/// `c`, moved from the f32 class to f64 where computing in f32 would round where Nx does
/// not. Nx.BinaryBackend computes a float result from the operands' exact values in
/// double and rounds once to the result type; the f32 class first converts each operand
/// to f32. For float operands and integers that `float` holds exactly the two agree (an
/// f32 operation of values of at most 24 bits is correctly rounded, and double rounding
/// through f32 or f64 is innocuous for f16 and bf16 results); an integer that `float`
/// does not hold (s32 or u32 in f32, s16 in f16 or bf16) is rounded before the operation,
/// and the result twice: such operands compute in f64 on devices that have it.
/// `float` is the float type the operation rounds to: its result's type, or the
/// operands' merged type for comparisons. An integer operand whose values the host wrote
/// counts by those values (`Tensor::value_bits`: a constant 0 fits any float).
pub(crate) fn exact_float(c: Compute, float: DType, operands: &[&Tensor]) -> Compute {
    let inexact = operands
        .iter()
        .any(|t| t.dtype.is_int() && t.magnitude_bits() > float.precision_bits());
    if c == Compute::F32 && float.is_float() && inexact && device_has_f64() {
        Compute::F64
    } else {
        c
    }
}

/// Whether the device computes f64: then f32 math can go through the f64 library
/// (`f32_via_f64`), and f32 sums, products and small dots accumulate in f64
/// (`float_accumulator`).
pub(crate) fn device_has_f64() -> bool {
    engine().is_ok_and(|e| e.info().f64)
}

/// Whether f32 (f16, bf16) math functions are computed in double and rounded
/// once to f32 (Nx.BinaryBackend's values: it computes in double). Only on devices with
/// f64, and by `NX_VULKAN_F32_MATH`:
/// - default (or `exact`): every function. sin, cos, tan and atan2 use the double-double
///   library (exact argument reduction), the others plain double
///   (shaders/common/math32x.glsl), which costs about what the f32 built-ins cost where
///   f64 is fast;
/// - `native`: none (the drivers' built-ins everywhere, within Vulkan's precision: exp
///   (3 + 2|x|) ulp, pow through exp2/log2 gives 3^2 = 9.0000005, NVIDIA's
///   sin(8388609) = 0). For GPUs with slow f64 that can live with it.
pub(crate) fn f32_via_f64() -> bool {
    static MODE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    let mode = MODE.get_or_init(|| std::env::var("NX_VULKAN_F32_MATH").unwrap_or_default());
    mode != "native" && device_has_f64()
}

/// Whether exact f32 exp (`f32_via_f64`) first tries the fast path of
/// shaders/common/exp32.glsl: f32 arithmetic with a proof of its rounding, the double
/// path only where the proof fails (about 0.03% of arguments). Same results either way.
/// On by default except on GPUs whose f64 runs at half the f32 rate (`fast_f64`), where
/// the double path is the faster one (H200: exp of 2^24 f32 70 us against 90 with the
/// fast path, raw nvidia-h200-2026-12-01zg; 54 us since the double path's table, and a
/// fused softmax 95 us against 106 with the fast path, raw nvidia-h200-2026-12-02a);
/// elsewhere f64 runs at 1/16-1/64 of f32 and
/// the double path costs many times more. `NX_VULKAN_EXP32=0` / `1` overrides.
pub(crate) fn exp_fast_path() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| match std::env::var("NX_VULKAN_EXP32").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => !engine().is_ok_and(|e| fast_f64(&e.info().name)),
    }) && f32_via_f64()
}

/// Whether a device name is one of the data-centre GPU families with f64 at half the
/// f32 rate (NVIDIA P100, V100, A100, A30, H100, H200, GH200, B100, B200; AMD Instinct;
/// Intel Data Center GPU Max): a name token equal to the family or followed by `-`.
pub(crate) fn fast_f64(name: &str) -> bool {
    const FAMILIES: [&str; 12] = [
        "P100", "V100", "A100", "A800", "A30", "H100", "H200", "H800", "GH200", "B100", "B200",
        "Instinct",
    ];
    name.contains("Data Center GPU Max")
        || name.split_whitespace().any(|token| {
            FAMILIES.iter().any(|f| {
                token == *f
                    || token
                        .strip_prefix(f)
                        .is_some_and(|rest| rest.starts_with('-'))
            })
        })
}

/// The class an f32 (or f16/bf16) accumulation runs in: f64 where the device has it, as
/// Nx.BinaryBackend accumulates (Erlang floats) before rounding once to the output.
/// Reductions are memory-bound, so the f64 additions cost next to nothing.
pub(crate) fn float_accumulator(c: Compute) -> Compute {
    if c == Compute::F32 && device_has_f64() {
        Compute::F64
    } else {
        c
    }
}

/// The class of an f32 product's accumulation outside sgemm.comp (matmul.comp, conv.comp):
/// f64 where the device has it and may flush f32 subnormals (NVIDIA's driver does), since
/// f32 sums there would lose subnormal operands and results; `c` elsewhere. sgemm.comp
/// proves each tile free of them or recomputes it in f64 instead (see the kernel).
pub(crate) fn subnormal_safe_accumulator(c: Compute) -> Compute {
    if engine().is_ok_and(|e| !e.info().denorm_preserve_f32) {
        float_accumulator(c)
    } else {
        c
    }
}

/// Push-constant builder: words in the order the shader's block declares them. It notes
/// which words hold buffer addresses, so that a recorded launch can be replayed on other
/// buffers (see `crate::launch_list`).
pub(crate) struct PushWords {
    words: Push,
    len: usize,
    /// Bit `i` set: words `i` and `i + 1` hold a device address (low word first).
    addr_words: u32,
}

impl PushWords {
    pub(crate) fn new() -> Self {
        PushWords {
            words: [0; 32],
            len: 0,
            addr_words: 0,
        }
    }
    /// The address of `block`'s byte 0, as two words.
    pub(crate) fn addr(self, block: &Block) -> Self {
        self.addr_at(block, 0)
    }
    /// The address of `block`'s byte `offset`, as two words.
    pub(crate) fn addr_at(mut self, block: &Block, offset: u64) -> Self {
        let a = block.addr + offset;
        self.addr_words |= 1 << self.len;
        self.words[self.len] = a as u32;
        self.words[self.len + 1] = (a >> 32) as u32;
        self.len += 2;
        self
    }
    pub(crate) fn u(mut self, v: u32) -> Self {
        self.words[self.len] = v;
        self.len += 1;
        self
    }
    pub(crate) fn i(self, v: i32) -> Self {
        self.u(v as u32)
    }
    /// A fixed-size array of `MAX_RANK` words, zero-padded.
    pub(crate) fn array(self, vals: impl IntoIterator<Item = u32>) -> Self {
        self.array_n(vals, layout::MAX_RANK)
    }
    /// A fixed-size array of `len` words, zero-padded.
    pub(crate) fn array_n(mut self, vals: impl IntoIterator<Item = u32>, len: usize) -> Self {
        let start = self.len;
        for (k, v) in vals.into_iter().take(len).enumerate() {
            self.words[start + k] = v;
        }
        self.len = start + len;
        self
    }
    pub(crate) fn words(&self) -> &Push {
        &self.words
    }
    /// Which words start an address (bit `i`: words `i`, `i + 1`).
    pub(crate) fn addr_words(&self) -> u32 {
        self.addr_words
    }
}

/// Records one launch of a build-time kernel specialised with `spec` (the kernel's
/// `OPS` and `MODES` specialization constants: op code, element types, access modes).
pub(crate) fn launch(
    kernel: Kernel,
    spec: [u32; 2],
    push: &PushWords,
    groups: [u32; 3],
    accesses: &[Access<'_>],
) -> Result<()> {
    let e = engine()?;
    let pipeline = e.kernels.get(kernel, spec)?;
    e.stream.dispatch(
        &pipeline,
        e.kernels.layout(),
        push.words(),
        push.addr_words(),
        groups,
        accesses,
    )
}

/// Converts an element count or stride to the 32-bit form the kernels take.
/// A u32 tensor holding `words`: the geometry tables that conv.comp and window.comp read.
pub(crate) fn u32_tensor(words: &[u32]) -> Result<crate::tensor::Tensor> {
    let bytes: Vec<u8> = words.iter().flat_map(|v| v.to_le_bytes()).collect();
    crate::tensor::Tensor::from_bytes(&[words.len()], DType::U32, &bytes)
}

pub(crate) fn u32_of(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| crate::invalid!("{what} {v} exceeds 2^32 - 1"))
}

/// Same for signed strides and offsets.
pub(crate) fn i32_of(v: isize, what: &str) -> Result<i32> {
    i32::try_from(v).map_err(|_| crate::invalid!("{what} {v} does not fit in 32 bits"))
}

/// The width of the raw kernels (select, gather, scatter) that move `t`'s elements: 1,
/// 2, 4 or 8 bytes; wider elements (c128) have none.
pub(crate) fn raw_width(t: DType, what: &str) -> Result<u8> {
    match t.size() {
        w @ (1 | 2 | 4 | 8) => Ok(w as u8),
        _ => Err(crate::unsupported!(
            "{what} of {} elements has no Vulkan kernel yet",
            t.name()
        )),
    }
}

/// Keeps an `Arc` alive in an access list.
pub(crate) fn read(b: &Arc<Block>) -> Access<'_> {
    Access::Read(b)
}

/// Marks a block as written in an access list.
pub(crate) fn write(b: &Arc<Block>) -> Access<'_> {
    Access::Write(b)
}

/// How a kernel reads an operand after view simplification (`MODES` in the shaders):
/// 0 strided, 1 contiguous at the output index, 2 one scalar.
pub(crate) fn access_mode(dims: &[usize], strides: &[isize]) -> u32 {
    match (dims, strides) {
        ([_], [1]) => 1,
        ([_], [0]) => 2,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::{fast_f64, grid_groups, MAX_GROUPS};

    #[test]
    fn fast_f64_families_by_name() {
        for name in [
            "NVIDIA H200",
            "NVIDIA A100-SXM4-80GB",
            "NVIDIA H100 PCIe",
            "Tesla V100-PCIE-16GB",
            "AMD Instinct MI300X",
            "Intel(R) Data Center GPU Max 1550",
        ] {
            assert!(fast_f64(name), "{name}");
        }
        for name in [
            "NVIDIA GeForce RTX 4090",
            "NVIDIA RTX A3000 Laptop GPU",
            "NVIDIA L40S",
            "AMD Radeon RX 7900 XTX",
            "Intel(R) Arc(tm) A770 Graphics (DG2)",
            "Apple M2 Max",
            "llvmpipe (LLVM 15.0.6, 256 bits)",
        ] {
            assert!(!fast_f64(name), "{name}");
        }
    }

    #[test]
    fn grids_cover_the_groups_with_at_most_one_row_of_slack() {
        assert_eq!(grid_groups(0), [1, 1, 1]);
        assert_eq!(grid_groups(1000), [1000, 1, 1]);
        assert_eq!(grid_groups(65_535), [65_535, 1, 1]);
        assert_eq!(grid_groups(65_536), [32_768, 2, 1]);
        assert_eq!(grid_groups(262_144), [52_429, 5, 1]);
        for g in [65_536u64, 100_000, 196_605, 1 << 24, 1 << 31] {
            let [x, y, _] = grid_groups(g);
            let (x, y) = (x as u64, y as u64);
            assert!(x <= MAX_GROUPS && y <= MAX_GROUPS, "{g}: {x} x {y}");
            assert!(
                x * y >= g.min(MAX_GROUPS * MAX_GROUPS),
                "{g}: {x} x {y} too few"
            );
            assert!(x * y - g.min(x * y) < y, "{g}: {x} x {y} leaves a row idle");
        }
    }
}
