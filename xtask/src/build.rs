//! `cargo xtask build`: everything into `dist/`.
//!
//! ```text
//! dist/bin/nova                 the host
//! dist/extension/               the unpacked extension (Chromium and Firefox)
//!   manifest.json background.js content.js
//!   pkg/nova_extension.js pkg/nova_extension_bg.wasm
//! ```

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use wasm_bindgen_cli_support::Bindgen;

use crate::cmd::{cargo, root, run_cmd, step, target_dir};
use crate::jsbuild::build_wasm;

/// Paths of a finished build.
pub struct Built {
    /// `dist/`.
    pub dist: PathBuf,
    /// The host binary in `dist/bin`.
    pub host: PathBuf,
    /// The unpacked extension.
    pub extension: PathBuf,
}

/// Builds host and extension.
pub fn build() -> anyhow::Result<Built> {
    let root = root();
    let dist = root.join("dist");
    let extension = dist.join("extension");
    let pkg = extension.join("pkg");

    crate::ensure::ensure_wasm_target()?;
    step("building the host (release)");
    run_cmd(cargo().args(["build", "--release", "--package", "nova-host", "--bin", "nova"]))?;
    let bin_dir = dist.join("bin");
    std::fs::create_dir_all(&bin_dir)?;
    let host = bin_dir.join("nova");
    replace_file(&target_dir().join("release/nova"), &host)?;

    step("building the extension (wasm32)");
    let wasm = build_wasm(&target_dir(), None)?;
    // The glue is made again only for a changed module (the stamp in target/ says which module
    // `pkg/` was made from).
    let stamp = format!("{:016x}", module_hash(&std::fs::read(&wasm)?));
    let stamp_file = target_dir().join("extension-glue.stamp");
    let made = ["nova_extension.js", "nova_extension_bg.wasm"].iter().all(|f| pkg.join(f).is_file());
    if made && std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str()) {
        step("the extension module is unchanged: wasm-bindgen glue kept");
    } else {
        if pkg.exists() {
            std::fs::remove_dir_all(&pkg)?;
        }
        std::fs::create_dir_all(&pkg)?;
        step("generating wasm-bindgen glue");
        let mut bindgen = Bindgen::new();
        bindgen.input_path(&wasm).web(true)?.typescript(false);
        bindgen.generate(&pkg).context("wasm-bindgen")?;
        std::fs::write(&stamp_file, &stamp)?;
    }

    crate::jsbuild::build(&extension)?;

    // Hunspell dictionaries for the spell-check scan, found by the host next to its binary.
    let tools = crate::ensure::ensure_npm_tools()?;
    let dictionaries = dist.join("dictionaries");
    std::fs::create_dir_all(&dictionaries)?;
    for (package, lang) in crate::jsbuild::DICTIONARIES {
        let from = tools.join("..").join(package);
        for ext in ["aff", "dic"] {
            replace_file(&from.join(format!("index.{ext}")), &dictionaries.join(format!("{lang}.{ext}")))?;
        }
    }

    for entry in std::fs::read_dir(root.join("extension/static"))? {
        let entry = entry?;
        std::fs::copy(entry.path(), extension.join(entry.file_name()))?;
    }
    let manifest = std::fs::read_to_string(root.join("manifest/manifest.json"))?;
    let mut manifest: serde_json::Value = serde_json::from_str(&manifest)?;
    manifest["version"] = env!("CARGO_PKG_VERSION").into();
    std::fs::write(extension.join("manifest.json"), serde_json::to_string_pretty(&manifest)?)?;
    step(&format!("built {}", dist.display()));
    Ok(Built { dist, host, extension })
}

/// A hash of a module's bytes, to tell whether its glue must be made again.
fn module_hash(bytes: &[u8]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::hash::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

/// Copies over `to` even while an old copy is running (unlink first, then copy).
fn replace_file(from: &Path, to: &Path) -> anyhow::Result<()> {
    let _ = std::fs::remove_file(to);
    std::fs::copy(from, to).with_context(|| format!("copying {} to {}", from.display(), to.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use sha2::{Digest as _, Sha256};

    #[test]
    fn manifest_key_pins_the_extension_id_the_host_allows() {
        let text =
            std::fs::read_to_string(crate::cmd::root().join("manifest/manifest.json")).expect("manifest");
        let manifest: serde_json::Value = serde_json::from_str(&text).expect("json");
        let der = base64::engine::general_purpose::STANDARD
            .decode(manifest["key"].as_str().expect("key"))
            .expect("base64");
        let digest = Sha256::digest(&der);
        let id: String =
            digest[..16].iter().flat_map(|b| [b >> 4, b & 0xf]).map(|n| char::from(b'a' + n)).collect();
        assert_eq!(id, nova_shared::CHROMIUM_EXTENSION_ID);
        assert_eq!(manifest["browser_specific_settings"]["gecko"]["id"], nova_shared::FIREFOX_ADDON_ID);
    }
}
