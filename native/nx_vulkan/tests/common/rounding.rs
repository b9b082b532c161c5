//! f32 math computed in double and rounded once (the engine's default on devices with
//! f64): whether this run does it, and which results are not a reference rounded once.

/// Whether this run computes f32 math in double and rounds it once (a device with f64
/// and `NX_VULKAN_F32_MATH` other than `native`).
pub fn f32_math_in_double() -> bool {
    nx_vulkan::engine::engine().unwrap().info().f64
        && std::env::var("NX_VULKAN_F32_MATH").map_or(true, |v| v != "native")
}

/// The results in `got` that are not `reference(x)` rounded once to f32 (NaN for NaN),
/// described for a failure message naming `what`. A reference within `near` (relative)
/// of the midpoint between two adjacent floats may round either way: the engine rounds
/// a double, whose last bit may differ from the reference's there.
pub fn not_rounded_once(
    x: &[f32],
    got: &[f32],
    reference: impl Fn(f64) -> f64,
    near: f64,
    what: &str,
) -> Vec<String> {
    let mut wrong = Vec::new();
    for (&v, &g) in x.iter().zip(got) {
        let w = reference(v as f64);
        let want = w as f32;
        if want.to_bits() == g.to_bits() || (want.is_nan() && g.is_nan()) {
            continue;
        }
        let mid = (want as f64 + g as f64) / 2.0;
        let adjacent = (want.to_bits() as i64 - g.to_bits() as i64).abs() == 1;
        if !(adjacent && (w - mid).abs() <= near * w.abs()) {
            wrong.push(format!(
                "{what}({v:e}) ({:#010x}) = {g:e}, want {want:e} ({w:e})",
                v.to_bits()
            ));
        }
    }
    wrong
}
