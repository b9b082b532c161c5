//! Helpers of the generated-kernel tests (tests/codegen.rs, tests/codegen_reductions.rs):
//! byte comparisons with any NaN equal to any NaN, and spirv-val on emitted modules.

use nx_vulkan::{DType, Tensor};

/// Whether the bytes of one element of `dtype` are a NaN.
pub fn is_nan(dtype: DType, b: &[u8]) -> bool {
    match dtype {
        DType::F32 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap()).is_nan(),
        _ => false,
    }
}

/// Asserts equal bytes element by element, any NaN equal to any NaN.
pub fn assert_same(what: &str, dtype: DType, got: &Tensor, want: &Tensor) {
    assert_eq!(got.dtype, want.dtype, "{what}: type");
    assert_eq!(got.shape, want.shape, "{what}: shape");
    let (g, w) = (got.to_bytes().unwrap(), want.to_bytes().unwrap());
    let size = dtype.size();
    for (k, (a, b)) in g.chunks(size).zip(w.chunks(size)).enumerate() {
        if a != b && !(is_nan(dtype, a) && is_nan(dtype, b)) {
            panic!("{what}: element {k} is {a:02x?}, the ops one by one give {b:02x?}");
        }
    }
}

pub fn spirv_val(words: &[u32], what: &str) {
    // One file per call: the tests run on several threads.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path =
        std::env::temp_dir().join(format!("nx_vulkan_codegen_{}_{k}.spv", std::process::id()));
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    std::fs::write(&path, bytes).unwrap();
    let out = std::process::Command::new("spirv-val")
        .args(["--target-env", "vulkan1.2"])
        .arg(&path)
        .output()
        .expect("spirv-val (Debian's spirv-tools) checks every generated module");
    let _ = std::fs::remove_file(&path);
    assert!(
        out.status.success(),
        "{what}: spirv-val rejects the module:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
