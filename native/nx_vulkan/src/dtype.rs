//! Element types as Nx names them, their storage and the kernel compute class.

use crate::error::{Error, Result};

/// An Nx element type the engine stores. Booleans are `U8`, as in Nx.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DType {
    U8,
    U16,
    U32,
    U64,
    S8,
    S16,
    S32,
    S64,
    F16,
    BF16,
    F32,
    F64,
    /// Complex of two f32 (real, imaginary), 8 bytes, as Nx stores it.
    C64,
    /// Complex of two f64, 16 bytes.
    C128,
    /// 8-bit float E5M2 (the top byte of an f16), Nx's `:f8`.
    F8,
    /// 8-bit float E4M3FN (bias 7, no infinities, only S.1111.111 is NaN).
    F8E4M3FN,
    /// Sub-byte integers (Nx's `:u2`, `:u4`, `:s2`, `:s4`): one byte per element on the
    /// device (signed ones sign-extended), every store wrapping to the type's bits as
    /// Nx's bitstrings do; Nx's binaries (packed, first element in the high bits) are
    /// unpacked on upload and packed on download.
    U2,
    U4,
    S2,
    S4,
}

/// The type a kernel computes in (the `CT_*` define of the shaders).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Compute {
    F32,
    F64,
    I32,
    U32,
    I64,
    U64,
    /// Complex values; element-wise complex kernels compute in their component class
    /// (`DType::component`), every other typed kernel has no complex variant.
    C64,
    C128,
}

/// Every storable type, in code order.
pub const ALL_DTYPES: [DType; 20] = [
    DType::U8,
    DType::U16,
    DType::U32,
    DType::U64,
    DType::S8,
    DType::S16,
    DType::S32,
    DType::S64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
    DType::F8,
    DType::F8E4M3FN,
    DType::U2,
    DType::U4,
    DType::S2,
    DType::S4,
];

impl DType {
    /// Type code shared with the shaders (`TY_*` in `shaders/common/types.glsl`).
    pub fn code(self) -> u32 {
        self as u32
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            DType::U8 | DType::S8 | DType::F8 | DType::F8E4M3FN => 1,
            DType::U2 | DType::U4 | DType::S2 | DType::S4 => 1,
            DType::U16 | DType::S16 | DType::F16 | DType::BF16 => 2,
            DType::U32 | DType::S32 | DType::F32 => 4,
            DType::U64 | DType::S64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// Bits per element in Nx (2 or 4 for the sub-byte types, stored in a byte each).
    pub fn bits(self) -> usize {
        match self {
            DType::U2 | DType::S2 => 2,
            DType::U4 | DType::S4 => 4,
            t => t.size() * 8,
        }
    }

    /// Significand bits of a float type, the implicit bit included (f32: 24); 0 for
    /// the other types.
    pub fn precision_bits(self) -> u32 {
        match self {
            DType::F8 => 3,
            DType::F8E4M3FN => 4,
            DType::BF16 => 8,
            DType::F16 => 11,
            DType::F32 => 24,
            DType::F64 => 53,
            _ => 0,
        }
    }

    /// Bits of magnitude of an integer type (s32: 31, u32: 32); 0 for the other types.
    pub fn magnitude_bits(self) -> u32 {
        match (self.is_int(), self.is_signed_int()) {
            (true, true) => self.bits() as u32 - 1,
            (true, false) => self.bits() as u32,
            _ => 0,
        }
    }

    /// True for u2, u4, s2 and s4.
    pub fn is_sub_byte(self) -> bool {
        self.bits() < 8
    }

    /// An integer wrapped to this integer type's bits (two's complement), as Nx stores
    /// it; other types return it unchanged.
    pub fn wrap_int(self, v: i128) -> i128 {
        if !self.is_int() || self.bits() >= 128 {
            return v;
        }
        let shift = 128 - self.bits() as u32;
        if self.is_signed_int() {
            (v << shift) >> shift
        } else {
            ((v << shift) as u128 >> shift) as i128
        }
    }

    /// Nx's short name, such as `"f32"`.
    pub fn name(self) -> &'static str {
        match self {
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::S8 => "s8",
            DType::S16 => "s16",
            DType::S32 => "s32",
            DType::S64 => "s64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::C64 => "c64",
            DType::C128 => "c128",
            DType::F8 => "f8",
            DType::F8E4M3FN => "f8_e4m3fn",
            DType::U2 => "u2",
            DType::U4 => "u4",
            DType::S2 => "s2",
            DType::S4 => "s4",
        }
    }

    /// Parses Nx's short name.
    pub fn parse(name: &str) -> Result<DType> {
        ALL_DTYPES
            .iter()
            .copied()
            .find(|t| t.name() == name)
            .ok_or_else(|| Error::InvalidArgument(format!("unknown element type {name:?}")))
    }

    /// True for f8, f8_e4m3fn, f16, bf16, f32 and f64.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            DType::F8 | DType::F8E4M3FN | DType::F16 | DType::BF16 | DType::F32 | DType::F64
        )
    }

    /// True for c64 and c128.
    pub fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// True for the integer types (signed or not).
    pub fn is_int(self) -> bool {
        !self.is_float() && !self.is_complex()
    }

    /// The type of one component of a complex type (f32 for c64, f64 for c128); a real
    /// type is its own component.
    pub fn component(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            t => t,
        }
    }

    /// True for the signed integer types.
    pub fn is_signed_int(self) -> bool {
        matches!(
            self,
            DType::S2 | DType::S4 | DType::S8 | DType::S16 | DType::S32 | DType::S64
        )
    }

    /// The class a kernel computes this type in.
    pub fn compute(self) -> Compute {
        match self {
            DType::F8 | DType::F8E4M3FN | DType::F16 | DType::BF16 | DType::F32 => Compute::F32,
            DType::F64 => Compute::F64,
            DType::S2 | DType::S4 | DType::S8 | DType::S16 | DType::S32 => Compute::I32,
            DType::U2 | DType::U4 | DType::U8 | DType::U16 | DType::U32 => Compute::U32,
            DType::S64 => Compute::I64,
            DType::U64 => Compute::U64,
            DType::C64 => Compute::C64,
            DType::C128 => Compute::C128,
        }
    }

    /// Nx.Type.merge/2 for the types the engine stores: the smallest type that holds
    /// both (floats win over integers, signed over unsigned).
    pub fn merge(a: DType, b: DType) -> DType {
        use DType::*;
        if a == b {
            return a;
        }
        if a.is_complex() || b.is_complex() {
            let wide = a == C128 || b == C128 || a == F64 || b == F64;
            return if wide { C128 } else { C64 };
        }
        match (a.is_float(), b.is_float()) {
            (true, true) => {
                if a == F64 || b == F64 {
                    F64
                } else if a == F32 || b == F32 || a != b {
                    // f16 with bf16 merges to f32 in Nx.
                    F32
                } else {
                    a
                }
            }
            (true, false) => a,
            (false, true) => b,
            (false, false) => {
                let (sa, sb) = (a.is_signed_int(), b.is_signed_int());
                if sa == sb {
                    if a.bits() >= b.bits() {
                        a
                    } else {
                        b
                    }
                } else {
                    let (s, u) = if sa { (a, b) } else { (b, a) };
                    // Signed must hold the unsigned: grow to twice the unsigned's width.
                    match (u.bits() * 2).max(s.bits()) {
                        4 => S4,
                        8 => S8,
                        16 => S16,
                        32 => S32,
                        _ => S64,
                    }
                }
            }
        }
    }
}

impl Compute {
    /// The element type whose storage matches this compute type exactly.
    pub fn storage(self) -> DType {
        match self {
            Compute::F32 => DType::F32,
            Compute::F64 => DType::F64,
            Compute::I32 => DType::S32,
            Compute::U32 => DType::U32,
            Compute::I64 => DType::S64,
            Compute::U64 => DType::U64,
            Compute::C64 => DType::C64,
            Compute::C128 => DType::C128,
        }
    }

    /// The module suffix of a typed kernel built for this class (`None` for complex
    /// classes, which only the complex kernels compute).
    pub fn suffix(self) -> Option<&'static str> {
        Some(match self {
            Compute::F32 => "f32",
            Compute::F64 => "f64",
            Compute::I32 => "i32",
            Compute::U32 => "u32",
            Compute::I64 => "i64",
            Compute::U64 => "u64",
            Compute::C64 | Compute::C128 => return None,
        })
    }

    /// True for the 64-bit classes, which need `shaderInt64` (and `shaderFloat64` for F64).
    pub fn is_64(self) -> bool {
        matches!(
            self,
            Compute::F64 | Compute::I64 | Compute::U64 | Compute::C128
        )
    }

    /// The class that can hold a conversion between `from` and `to` exactly.
    /// Any f64 involved computes in f64; a float to an integer of at most 16 bits in
    /// f32; otherwise a 64-bit integer on either side computes in 64-bit integers;
    /// otherwise the output's class.
    pub fn for_conversion(from: DType, to: DType) -> Compute {
        if from == DType::F64 || to == DType::F64 {
            Compute::F64
        } else if from.is_float() && to.is_int() && to.bits() <= 16 {
            // Through f32, so an infinity reaches the store as one and saturates to the
            // narrow type's range (Nx: as_type(inf, :s8) = 127), not to s32's and wrapped.
            Compute::F32
        } else if matches!(from, DType::S64 | DType::U64) {
            from.compute()
        } else {
            to.compute()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for t in ALL_DTYPES {
            assert_eq!(DType::parse(t.name()).unwrap(), t);
        }
        assert_eq!(DType::parse("u2").unwrap(), DType::U2);
        assert!(matches!(DType::parse("u3"), Err(Error::InvalidArgument(_))));
        assert!(matches!(DType::parse("x9"), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn merge_follows_nx() {
        use DType::*;
        assert_eq!(DType::merge(U8, S8), S16);
        assert_eq!(DType::merge(U32, S32), S64);
        assert_eq!(DType::merge(S32, F32), F32);
        assert_eq!(DType::merge(F16, BF16), F32);
        assert_eq!(DType::merge(F32, F64), F64);
        assert_eq!(DType::merge(U8, U16), U16);
        assert_eq!(DType::merge(S8, U8), S16);
        assert_eq!(DType::merge(C64, S64), C64);
        assert_eq!(DType::merge(F32, C64), C64);
        assert_eq!(DType::merge(F64, C64), C128);
        assert_eq!(DType::merge(C64, C128), C128);
        assert_eq!(DType::merge(U2, S2), S4);
        assert_eq!(DType::merge(U4, S4), S8);
        assert_eq!(DType::merge(U4, U2), U4);
        assert_eq!(DType::merge(S2, U8), S16);
        assert_eq!(DType::merge(S4, F16), F16);
    }

    #[test]
    fn integers_fit_floats_by_their_magnitude() {
        use DType::*;
        let fits = |i: DType, f: DType| i.magnitude_bits() <= f.precision_bits();
        assert!(fits(S16, F32) && fits(U16, F32));
        assert!(!fits(S32, F32) && !fits(U32, F32));
        assert!(fits(S32, F64) && !fits(S64, F64));
        assert!(fits(U8, BF16) && !fits(S16, BF16));
        assert!(fits(S8, F16) && !fits(U16, F16));
        assert!(fits(U2, F8) && !fits(U4, F8) && fits(U4, F8E4M3FN));
    }

    #[test]
    fn sub_byte_values_wrap_to_their_bits() {
        assert_eq!(DType::U2.wrap_int(5), 1);
        assert_eq!(DType::U4.wrap_int(-1), 15);
        assert_eq!(DType::S2.wrap_int(2), -2);
        assert_eq!(DType::S4.wrap_int(8), -8);
        assert_eq!(DType::S4.wrap_int(-9), 7);
        assert_eq!(DType::U8.wrap_int(256), 0);
        assert_eq!(DType::S64.wrap_int(-5), -5);
    }
}
