//! The shipped SPIR-V: a folder of `{name}.spv` files beside the GLSL they come from, and a
//! `MANIFEST` that records, per module, the SHA-256 of its inputs (the source, every file it
//! includes, its defines) and of its SPIR-V. A default build (no shaderc, no C++) embeds
//! these files after checking both hashes, so an edited shader whose SPIR-V was not
//! regenerated stops the build with the command that regenerates it.
use crate::variants::Variant;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// The command that regenerates the shipped SPIR-V (builds shaderc, ~10 minutes once).
pub const REGENERATE: &str = "scripts/compile_shaders";

/// One manifest row.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Entry {
    pub inputs: String,
    pub spv: String,
}

/// A shader folder and its shipped SPIR-V (`{shader_dir}/spirv`).
pub struct Store {
    pub shader_dir: PathBuf,
    pub dir: PathBuf,
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(64);
    for b in Sha256::digest(bytes) {
        write!(s, "{b:02x}").unwrap();
    }
    s
}

/// The quoted `#include` targets of a GLSL text, in order.
fn includes(text: &str) -> impl Iterator<Item = &str> {
    text.lines().filter_map(|line| {
        let rest = line.trim_start().strip_prefix("#include")?.trim();
        rest.strip_prefix('"')?.split('"').next()
    })
}

impl Store {
    /// The store of `shader_dir`.
    pub fn new(shader_dir: &Path) -> Store {
        Store {
            shader_dir: shader_dir.to_path_buf(),
            dir: shader_dir.join("spirv"),
        }
    }

    /// The shipped file of module `name`.
    pub fn spv(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}.spv"))
    }

    /// SHA-256 of a variant's inputs: its defines, then each file of its include closure
    /// (depth first, each once) as its path under the shader folder and its bytes. Every
    /// include counts, also one that an `#ifdef` leaves out: a stale check may be
    /// conservative, never blind.
    pub fn inputs_hash(&self, (_, src, defines): &Variant) -> String {
        let mut data = Vec::new();
        for d in defines {
            data.extend_from_slice(d.as_bytes());
            data.push(0);
        }
        let mut seen = Vec::new();
        self.closure(&self.shader_dir.join(src), &mut seen, &mut data);
        hex(&data)
    }

    fn closure(&self, path: &Path, seen: &mut Vec<PathBuf>, data: &mut Vec<u8>) {
        let path = normalise(path);
        if seen.contains(&path) {
            return;
        }
        seen.push(path.clone());
        // Line endings normalised: a checkout that converts them (Windows) hashes the same.
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading shader {}: {e}", path.display()))
            .replace("\r\n", "\n");
        let rel = path.strip_prefix(&self.shader_dir).unwrap_or(&path);
        data.extend_from_slice(rel.to_string_lossy().as_bytes());
        data.push(0);
        data.extend_from_slice(text.as_bytes());
        data.push(0);
        let base = path.parent().unwrap_or(Path::new(".")).to_path_buf();
        for inc in includes(&text) {
            self.closure(&base.join(inc), seen, data);
        }
    }

    /// The manifest's rows by module name (empty when there is none).
    pub fn manifest(&self) -> HashMap<String, Entry> {
        let text = std::fs::read_to_string(self.dir.join("MANIFEST")).unwrap_or_default();
        text.lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .filter_map(|l| {
                let f: Vec<&str> = l.split('\t').collect();
                let (name, inputs, spv) = (f.first()?, f.get(3)?, f.get(4)?);
                let entry = Entry {
                    inputs: inputs.to_string(),
                    spv: spv.to_string(),
                };
                Some((name.to_string(), entry))
            })
            .collect()
    }

    /// The modules whose shipped SPIR-V does not match the sources (or is missing or
    /// altered), each with the reason.
    pub fn stale(&self, variants: &[Variant]) -> Vec<(String, &'static str)> {
        let manifest = self.manifest();
        let mut stale = Vec::new();
        for v in variants {
            let reason = match manifest.get(&v.0) {
                None => Some("not in the manifest"),
                Some(e) if e.inputs != self.inputs_hash(v) => Some("its GLSL changed"),
                Some(e) => match std::fs::read(self.spv(&v.0)) {
                    Err(_) => Some("its .spv is missing"),
                    Ok(bytes) if hex(&bytes) != e.spv => Some("its .spv was altered"),
                    Ok(_) => None,
                },
            };
            if let Some(r) = reason {
                stale.push((v.0.clone(), r));
            }
        }
        stale
    }

    /// Panics, naming the stale modules and the command that regenerates them, unless
    /// every variant's shipped SPIR-V matches its sources.
    pub fn verify(&self, variants: &[Variant]) {
        let stale = self.stale(variants);
        if stale.is_empty() {
            return;
        }
        let list: Vec<String> = stale
            .iter()
            .take(8)
            .map(|(n, r)| format!("  {n}: {r}"))
            .collect();
        panic!(
            "the shipped SPIR-V in {} is stale for {} module(s):\n{}\n\
             Regenerate it with `{REGENERATE}` (builds the shaderc feature: cmake, python3 \
             and a C++ compiler), then commit shaders' spirv folders.",
            self.dir.display(),
            stale.len(),
            list.join("\n")
        );
    }

    /// Writes `compiled` (module name → SPIR-V) as the shipped set: changed files only,
    /// modules no longer built removed, and a new manifest.
    #[cfg(feature = "shaderc")]
    pub fn update(&self, variants: &[Variant], compiled: &HashMap<String, Vec<u8>>) {
        std::fs::create_dir_all(&self.dir).unwrap();
        let mut manifest = String::from(
            "# Shipped SPIR-V (see native/nx_vulkan/build/spirv_store.rs). Generated by \
             scripts/compile_shaders: do not edit.\n# module\tsource\tdefines\tinputs sha256\tspv sha256\n",
        );
        for v in variants {
            let bytes = &compiled[&v.0];
            let path = self.spv(&v.0);
            if std::fs::read(&path).ok().as_ref() != Some(bytes) {
                std::fs::write(&path, bytes).unwrap();
            }
            let (name, src, defines) = v;
            writeln!(
                manifest,
                "{name}\t{src}\t{}\t{}\t{}",
                defines.join(" "),
                self.inputs_hash(v),
                hex(bytes)
            )
            .unwrap();
        }
        for entry in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let path = entry.path();
            let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned());
            if path.extension().is_some_and(|e| e == "spv")
                && !stem.is_some_and(|s| compiled.contains_key(&s))
            {
                std::fs::remove_file(&path).unwrap();
            }
        }
        std::fs::write(self.dir.join("MANIFEST"), manifest).unwrap();
    }

    /// The modules whose shipped bytes differ from `compiled` (the shaderc check).
    #[cfg(feature = "shaderc")]
    pub fn differs(&self, compiled: &HashMap<String, Vec<u8>>) -> Vec<String> {
        let mut names: Vec<String> = compiled
            .iter()
            .filter(|(name, bytes)| std::fs::read(self.spv(name)).ok().as_ref() != Some(bytes))
            .map(|(name, _)| name.clone())
            .collect();
        names.sort();
        names
    }
}

/// `a/b/../c` as `a/c` (include paths climb out of their folder).
fn normalise(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            c => out.push(c),
        }
    }
    out
}
