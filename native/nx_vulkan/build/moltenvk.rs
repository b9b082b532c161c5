//! The `moltenvk` feature (macOS releases): links MoltenVK's static library into the NIF,
//! with the system frameworks it calls. `MOLTENVK_LIB_DIR` names the folder holding
//! `libMoltenVK.a` (in the MoltenVK release: `MoltenVK/static/MoltenVK.xcframework/
//! macos-arm64_x86_64`). `src/loader.rs` uses it only where no system loader is found.
pub fn link() {
    println!("cargo::rerun-if-env-changed=MOLTENVK_LIB_DIR");
    let macos = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "macos");
    if std::env::var_os("CARGO_FEATURE_MOLTENVK").is_none() || !macos {
        return;
    }
    let dir = std::env::var("MOLTENVK_LIB_DIR").unwrap_or_else(|_| {
        panic!("the moltenvk feature needs MOLTENVK_LIB_DIR: the folder of libMoltenVK.a")
    });
    println!("cargo::rustc-link-search=native={dir}");
    println!("cargo::rustc-link-lib=static=MoltenVK");
    for framework in [
        "Metal",
        "Foundation",
        "QuartzCore",
        "IOSurface",
        "IOKit",
        "CoreGraphics",
        "AppKit",
    ] {
        println!("cargo::rustc-link-lib=framework={framework}");
    }
    println!("cargo::rustc-link-lib=c++");
}
