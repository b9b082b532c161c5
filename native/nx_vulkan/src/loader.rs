//! Finding the Vulkan loader: `NX_VULKAN_LOADER` (a path) if set, else the system loader
//! under its usual names, else, in macOS builds with the `moltenvk` feature, the MoltenVK
//! linked into this library (so a Mac without the Vulkan SDK still runs, and one with it
//! keeps the SDK's loader and validation layers). Which one was used is reported in
//! `Nx.Vulkan.info/0`; when none is found the error names the package to install.
use crate::error::{Error, Result};
use std::sync::Arc;
use vulkano::library::{DynamicLibraryLoader, VulkanLibrary};

/// The system loader's names, tried in order (vulkano's list, plus Homebrew's prefix on
/// Apple silicon, which is not on the default search path).
#[cfg(all(unix, not(target_os = "macos")))]
const SYSTEM: &[&str] = &["libvulkan.so.1", "libvulkan.so"];
#[cfg(target_os = "macos")]
const SYSTEM: &[&str] = &[
    "libvulkan.1.dylib",
    "libvulkan.dylib",
    "/usr/local/lib/libvulkan.1.dylib",
    "/opt/homebrew/lib/libvulkan.1.dylib",
    "libMoltenVK.dylib",
    "vulkan.framework/vulkan",
    "MoltenVK.framework/MoltenVK",
];
#[cfg(windows)]
const SYSTEM: &[&str] = &["vulkan-1.dll"];

/// The loaded library and a description of where it came from.
pub struct Loaded {
    pub library: Arc<VulkanLibrary>,
    pub description: String,
}

/// Loads the Vulkan loader (see the module doc).
pub fn load() -> Result<Loaded> {
    if let Ok(path) = std::env::var("NX_VULKAN_LOADER") {
        return dynamic(&path)
            .map(|library| Loaded {
                library,
                description: format!("{path} (NX_VULKAN_LOADER)"),
            })
            .map_err(|e| {
                Error::NoDevice(format!(
                    "cannot load the Vulkan loader NX_VULKAN_LOADER={path}: {e}. {}",
                    install_hint()
                ))
            });
    }
    let mut last = String::new();
    for path in SYSTEM {
        match dynamic(path) {
            Ok(library) => {
                return Ok(Loaded {
                    library,
                    description: format!("system ({path})"),
                })
            }
            Err(e) => last = e,
        }
    }
    if let Some(loaded) = bundled() {
        return loaded;
    }
    Err(Error::NoDevice(format!(
        "no Vulkan loader found (tried {}; last error: {last}). {}",
        SYSTEM.join(", "),
        install_hint()
    )))
}

fn dynamic(path: &str) -> std::result::Result<Arc<VulkanLibrary>, String> {
    // SAFETY: loading a shared library runs its initialisers; the Vulkan loader's are
    // the ones every Vulkan program runs.
    let loader = unsafe { DynamicLibraryLoader::new(path) }.map_err(|e| e.to_string())?;
    VulkanLibrary::with_loader(loader).map_err(|e| e.to_string())
}

/// MoltenVK linked statically into this library (`moltenvk` feature, macOS releases).
#[cfg(feature = "moltenvk")]
fn bundled() -> Option<Result<Loaded>> {
    // The macro names these unqualified: it declares `vkGetInstanceProcAddr`, which the
    // static MoltenVK defines.
    use std::ffi::c_char;
    use vulkano::library::Loader;
    let loader = vulkano::statically_linked_vulkan_loader!();
    Some(
        VulkanLibrary::with_loader(loader)
            .map(|library| Loaded {
                library,
                description: "MoltenVK (bundled, linked statically)".into(),
            })
            .map_err(|e| Error::NoDevice(format!("the bundled MoltenVK: {e}"))),
    )
}

#[cfg(not(feature = "moltenvk"))]
fn bundled() -> Option<Result<Loaded>> {
    None
}

/// What to install for a Vulkan loader on this OS.
pub fn install_hint() -> &'static str {
    if cfg!(target_os = "macos") {
        "Install the Vulkan SDK (LunarG) or Homebrew's `vulkan-loader` and `molten-vk`; \
         the precompiled macOS NIFs bundle MoltenVK and need neither."
    } else if cfg!(target_os = "freebsd") {
        "Install the loader: `pkg install vulkan-loader` (and your GPU's driver)."
    } else if cfg!(windows) {
        "Install your GPU vendor's driver, which ships vulkan-1.dll."
    } else {
        "Install the loader: `apt install libvulkan1` (Debian, Ubuntu), `dnf install \
         vulkan-loader` (Fedora), `apk add vulkan-loader` (Alpine), `pacman -S \
         vulkan-icd-loader` (Arch)."
    }
}

/// How to run without a GPU driver: Mesa's lavapipe (Vulkan on the CPU).
pub fn no_device_hint() -> &'static str {
    if cfg!(target_os = "freebsd") {
        "No Vulkan driver answered. Install your GPU's driver, or Mesa's CPU driver \
         lavapipe to run anyway (`pkg install mesa-devel` or `mesa-dri`)."
    } else if cfg!(target_os = "macos") {
        "No Vulkan driver answered: MoltenVK (Vulkan on Metal) is missing from the loader's \
         ICDs."
    } else {
        "No Vulkan driver answered. Install your GPU's driver, or Mesa's CPU driver \
         lavapipe to run anyway: `apt install mesa-vulkan-drivers` (Debian, Ubuntu), `dnf \
         install mesa-vulkan-drivers` (Fedora), `apk add mesa-vulkan-swrast` (Alpine)."
    }
}
