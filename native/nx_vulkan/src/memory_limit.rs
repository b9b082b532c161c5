//! Reading `NX_VULKAN_MEMORY_LIMIT`, the most bytes of buffers the engine holds (see
//! `memory::Memory::create`).

use crate::error::{Error, Result};

/// The engine's memory limit from `NX_VULKAN_MEMORY_LIMIT`: bytes (`1073741824`), with a
/// binary suffix (`512M`, `2G`, `64K`), or a fraction of the largest heap (`0.8`).
/// `None` where unset; an unreadable value is an error naming it.
pub fn memory_limit(value: Option<&str>, heap: u64) -> Result<Option<u64>> {
    let Some(v) = value.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(None);
    };
    let bad = || {
        Error::InvalidArgument(format!(
            "NX_VULKAN_MEMORY_LIMIT={v:?}: give bytes (1073741824), a size with K, M or G \
             (512M), or a fraction of the device's memory (0.8)"
        ))
    };
    if v.contains('.') {
        let f: f64 = v.parse().map_err(|_| bad())?;
        return if f > 0.0 && f <= 1.0 {
            Ok(Some((heap as f64 * f) as u64))
        } else {
            Err(bad())
        };
    }
    let (digits, unit) = match v.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (&v[..i], c.to_ascii_uppercase()),
        _ => (v, 'B'),
    };
    let shift = match unit {
        'B' => 0,
        'K' => 10,
        'M' => 20,
        'G' => 30,
        _ => return Err(bad()),
    };
    let n: u64 = digits.parse().map_err(|_| bad())?;
    match n.checked_mul(1 << shift) {
        Some(b) if b > 0 => Ok(Some(b)),
        _ => Err(bad()),
    }
}
