//! Nx's binaries of the sub-byte integer types (u2, u4, s2, s4): elements packed
//! MSB-first (the first element in the high bits of the first byte, as Erlang bitstrings
//! lay them out), the last byte padded with zero bits. The device stores one byte per
//! element (signed types sign-extended), so uploads unpack and downloads pack.

use crate::dtype::DType;
use crate::error::{Error, Result};

/// Bytes of Nx's binary of `n` elements of `dtype` (packed for the sub-byte types).
pub fn binary_len(dtype: DType, n: usize) -> usize {
    // (n * bits) / 8 rounded up, without the product (a caller's shape can have 2^62
    // elements, whose bit count wraps).
    (n / 8) * dtype.bits() + ((n % 8) * dtype.bits()).div_ceil(8)
}

/// The storage bytes of `n` sub-byte elements from Nx's packed binary.
pub fn unpack(dtype: DType, packed: &[u8], n: usize) -> Result<Vec<u8>> {
    let bits = dtype.bits();
    if packed.len() != binary_len(dtype, n) {
        return Err(Error::InvalidArgument(format!(
            "from_binary: {} bytes do not hold {n} {} elements ({} bytes)",
            packed.len(),
            dtype.name(),
            binary_len(dtype, n)
        )));
    }
    // Storage is one byte per element: refuse before allocating what no tensor can hold
    // (kernels index elements with 32 bits).
    if n > u32::MAX as usize {
        return Err(Error::InvalidArgument(format!(
            "from_binary: {n} {} elements are more than a tensor can hold (2^32 - 1)",
            dtype.name()
        )));
    }
    let per_byte = 8 / bits;
    let mask = (1u8 << bits) - 1;
    Ok((0..n)
        .map(|i| {
            let shift = 8 - bits * (i % per_byte + 1);
            let v = (packed[i / per_byte] >> shift) & mask;
            dtype.wrap_int(v as i128) as u8
        })
        .collect())
}

/// Nx's packed binary of sub-byte elements from their storage bytes.
pub fn pack(dtype: DType, storage: &[u8]) -> Vec<u8> {
    let bits = dtype.bits();
    let per_byte = 8 / bits;
    let mask = (1u8 << bits) - 1;
    let mut out = vec![0u8; binary_len(dtype, storage.len())];
    for (i, &b) in storage.iter().enumerate() {
        out[i / per_byte] |= (b & mask) << (8 - bits * (i % per_byte + 1));
    }
    out
}

/// Storage bytes of a sub-byte type in canonical form (each wrapped to the type's bits),
/// so no kernel ever reads a value outside the type's range.
pub fn canonical(dtype: DType, storage: &[u8]) -> Vec<u8> {
    storage
        .iter()
        .map(|&b| dtype.wrap_int(b as i8 as i128) as u8)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_len_of_huge_counts_does_not_wrap() {
        assert_eq!(binary_len(DType::U4, 3), 2);
        assert_eq!(binary_len(DType::U2, 9), 3);
        assert_eq!(binary_len(DType::U4, 1 << 62), 1 << 61);
        assert!(unpack(DType::U4, &[], 1 << 62).is_err());
    }

    #[test]
    fn packs_msb_first_like_erlang_bitstrings() {
        // Nx.bit_size/1's doctest: <<1::2, 2::2, 3::2, 3::2, 2::2, 1::2>> = "b5A=".
        let storage = [1u8, 2, 3, 3, 2, 1];
        let packed = pack(DType::U2, &storage);
        assert_eq!(packed, vec![0x6F, 0x90]);
        assert_eq!(unpack(DType::U2, &packed, 6).unwrap(), storage);
        // s4: -1 and 7 are 0xF and 0x7; storage is sign-extended.
        assert_eq!(pack(DType::S4, &[0xFF, 7, 0xF8]), vec![0xF7, 0x80]);
        assert_eq!(
            unpack(DType::S4, &[0xF7, 0x80], 3).unwrap(),
            vec![0xFF, 7, 0xF8]
        );
        assert!(unpack(DType::U4, &[0xF7], 3).is_err());
    }

    #[test]
    fn canonical_storage_wraps() {
        assert_eq!(canonical(DType::U4, &[0x1F, 3]), vec![0x0F, 3]);
        assert_eq!(canonical(DType::S2, &[2, 1, 0xFF]), vec![0xFE, 1, 0xFF]);
    }
}
