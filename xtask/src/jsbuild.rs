//! The JavaScript build of the page-side module, for pages whose CSP forbids WebAssembly (Chromium
//! applies the page's CSP to WebAssembly compiled in content scripts). The same Rust is compiled
//! for the MVP wasm feature set, glued with wasm-bindgen's bundler target and translated to
//! JavaScript with binaryen's wasm2js (the README, "Strict-CSP pages" under "How it fits
//! together").
//!
//! Output: `dist/extension/pkg-js/` with `nova_extension.js` (the entry the loader imports),
//! `nova_extension_bg.js` (glue) and `nova_extension_bg.wasm.js` (the translated module).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use wasm_bindgen_cli_support::Bindgen;

use crate::cmd::{cargo, run_cmd, step, target_dir};
use crate::ensure::ensure_npm_tools;

/// binaryen from npm (Debian's 108 lacks the lowering passes) and terser, pinned.
/// Also the Hunspell dictionaries of the spell-check scan (wooorm/dictionaries, UTF-8).
pub const DICTIONARIES: &[(&str, &str)] = &[("dictionary-en", "en"), ("dictionary-de", "de")];

/// The files of `pkg-js/`.
const OUTPUTS: [&str; 3] = ["nova_extension.js", "nova_extension_bg.js", "nova_extension_bg.wasm.js"];

/// Builds `pkg-js/` inside `extension_dir`, or takes it from the cache when its inputs (the MVP
/// module, the pinned npm tools and this build's own steps) are the same as last time.
pub fn build(extension_dir: &Path) -> anyhow::Result<()> {
    step("building the page module for strict-CSP pages (wasm MVP -> JavaScript)");
    let mvp = build_wasm(&target_dir().join("wasm-mvp"), Some("-C target-cpu=mvp"))?;
    let raw = std::fs::read(mvp)?;
    let out = extension_dir.join("pkg-js");
    let cached = target_dir().join("jsbuild-cache").join(format!("{:016x}", cache_key(&raw)));
    if OUTPUTS.iter().all(|f| cached.join(f).is_file()) {
        step("the strict-CSP page module is unchanged: taken from the cache");
        return place(&cached, &out);
    }
    translate(&raw, &out)?;
    // Only the latest build is kept.
    let _ = std::fs::remove_dir_all(target_dir().join("jsbuild-cache"));
    place(&out, &cached)
}

/// What the JavaScript build depends on besides the module: the pinned tools and these steps.
fn cache_key(module: &[u8]) -> u64 {
    use std::hash::{Hash as _, Hasher as _};
    let mut h = std::hash::DefaultHasher::new();
    module.hash(&mut h);
    crate::ensure::NPM_TOOLS.hash(&mut h);
    include_str!("jsbuild.rs").hash(&mut h);
    h.finish()
}

/// Copies the `pkg-js` files from `from` into a fresh `to`.
fn place(from: &Path, to: &Path) -> anyhow::Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::create_dir_all(to)?;
    for f in OUTPUTS {
        std::fs::copy(from.join(f), to.join(f)).with_context(|| format!("copying {f}"))?;
    }
    Ok(())
}

/// The MVP module to minified JavaScript in `out`.
fn translate(raw: &[u8], out: &Path) -> anyhow::Result<()> {
    let work = target_dir().join("jsbuild");
    if work.exists() {
        std::fs::remove_dir_all(&work)?;
    }
    std::fs::create_dir_all(&work)?;
    let stripped = work.join("nova_extension.wasm");
    std::fs::write(&stripped, strip_custom_section(raw, "target_features")?)?;

    let glue = work.join("glue");
    let mut bindgen = Bindgen::new();
    bindgen.input_path(&stripped).bundler(true)?.typescript(false);
    bindgen.generate(&glue).context("wasm-bindgen (bundler)")?;

    let tools = ensure_npm_tools()?;
    let lowered = work.join("lowered.wasm");
    run_cmd(
        Command::new(tools.join("wasm-opt"))
            .arg(glue.join("nova_extension_bg.wasm"))
            .args([
                "--enable-bulk-memory",
                "--enable-bulk-memory-opt",
                "--enable-sign-ext",
                "--enable-nontrapping-float-to-int",
                "--enable-mutable-globals",
                "--llvm-nontrapping-fptoint-lowering",
                "--llvm-memory-copy-fill-lowering",
                "--signext-lowering",
                "-o",
            ])
            .arg(&lowered),
    )?;
    let translated = work.join("nova_extension_bg.wasm.js");
    run_cmd(Command::new(tools.join("wasm2js")).arg(&lowered).args(["-Oz", "-o"]).arg(&translated))?;

    let module = std::fs::read_to_string(&translated)?;
    let module = patch_memory_grow(&module)?;
    if module.contains("from 'env'") || module.contains("from \"env\"") {
        bail!("the JS build imports from `env`: a 64-bit integer crosses the Rust/JS boundary in page code");
    }
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    std::fs::create_dir_all(out)?;
    std::fs::write(out.join("nova_extension_bg.wasm.js"), module)?;
    std::fs::copy(glue.join("nova_extension_bg.js"), out.join("nova_extension_bg.js"))?;
    let entry = std::fs::read_to_string(glue.join("nova_extension.js"))?;
    let entry = entry
        .replace("\"./nova_extension_bg.wasm\"", "\"./nova_extension_bg.wasm.js\"")
        .replace("'./nova_extension_bg.wasm'", "'./nova_extension_bg.wasm.js'");
    if !entry.contains("nova_extension_bg.wasm.js") {
        bail!("unexpected wasm-bindgen bundler entry: no `./nova_extension_bg.wasm` import to redirect");
    }
    std::fs::write(out.join("nova_extension.js"), entry)?;
    for file in ["nova_extension_bg.wasm.js", "nova_extension_bg.js"] {
        let path = out.join(file);
        run_cmd(
            Command::new(tools.join("terser"))
                .arg(&path)
                .args(["--module", "--compress", "--mangle", "-o"])
                .arg(&path),
        )?;
    }
    Ok(())
}

/// Builds the extension crate for wasm32 (profile `wasm`) into `target`, with extra
/// `RUSTFLAGS` when given; returns the module's path.
pub fn build_wasm(target: &Path, rustflags: Option<&str>) -> anyhow::Result<PathBuf> {
    let mut cmd = cargo();
    cmd.args(["build", "--package", "nova-extension", "--lib"])
        .args(["--target", "wasm32-unknown-unknown", "--profile", "wasm"])
        .env("CARGO_TARGET_DIR", target);
    if let Some(flags) = rustflags {
        cmd.env("RUSTFLAGS", flags);
    }
    run_cmd(&mut cmd)?;
    Ok(target.join("wasm32-unknown-unknown/wasm/nova_extension.wasm"))
}

/// Removes one custom section from a wasm module. The prebuilt std declares
/// `+reference-types,+multivalue` in `target_features`, which would make wasm-bindgen emit
/// externref glue that wasm2js cannot translate.
pub fn strip_custom_section(wasm: &[u8], name: &str) -> anyhow::Result<Vec<u8>> {
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        bail!("not a wasm module");
    }
    let mut out = wasm[..8].to_vec();
    let mut pos = 8;
    while pos < wasm.len() {
        let start = pos;
        let id = wasm[pos];
        pos += 1;
        let (size, n) = leb128(&wasm[pos..])?;
        pos += n;
        let end =
            pos.checked_add(size).filter(|e| *e <= wasm.len()).context("section overruns the module")?;
        let drop = id == 0 && {
            let (len, n) = leb128(&wasm[pos..])?;
            wasm.get(pos + n..pos + n + len) == Some(name.as_bytes())
        };
        if !drop {
            out.extend_from_slice(&wasm[start..end]);
        }
        pos = end;
    }
    Ok(out)
}

fn leb128(bytes: &[u8]) -> anyhow::Result<(usize, usize)> {
    let mut value = 0usize;
    for (i, b) in bytes.iter().enumerate().take(5) {
        value |= usize::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    bail!("bad LEB128 in wasm section header")
}

/// wasm2js grows memory by copying into a new ArrayBuffer and leaves the old one attached;
/// wasm-bindgen refreshes its views only when the old buffer is detached, so reads after a
/// growth would hit the stale copy. `ArrayBuffer.prototype.transfer` detaches the old buffer.
/// Fails the build if the generated grow function no longer has the expected shape.
pub fn patch_memory_grow(module: &str) -> anyhow::Result<String> {
    const COPY: &str = "newHEAP8.set(HEAP8);";
    let alloc_start = module.find("var newBuffer = new ArrayBuffer(").context(
        "wasm2js memory-grow function changed shape (no `var newBuffer = new ArrayBuffer(`); update patch_memory_grow",
    )?;
    let alloc_end =
        module[alloc_start..].find(';').map(|i| alloc_start + i + 1).context("unterminated allocation")?;
    let size_expr = module[alloc_start + "var newBuffer = new ArrayBuffer(".len()..alloc_end - 2].to_owned();
    let mut patched = String::with_capacity(module.len());
    patched.push_str(&module[..alloc_start]);
    patched.push_str(&format!("var newBuffer = buffer.transfer({size_expr});"));
    patched.push_str(&module[alloc_end..]);
    let copy = patched.find(COPY).context("wasm2js memory-grow function changed shape (no HEAP8 copy)")?;
    patched.replace_range(copy..copy + COPY.len(), "");
    Ok(patched)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_only_the_named_custom_section() {
        let mut m = b"\0asm\x01\0\0\0".to_vec();
        // custom "target_features" with 2 payload bytes, then custom "keep" with 1 byte.
        m.extend_from_slice(&[0, 18, 15]);
        m.extend_from_slice(b"target_features");
        m.extend_from_slice(&[1, 2]);
        m.extend_from_slice(&[0, 6, 4]);
        m.extend_from_slice(b"keep");
        m.push(9);
        let out = strip_custom_section(&m, "target_features").expect("strip");
        assert_eq!(&out[8..], &[0, 6, 4, b'k', b'e', b'e', b'p', 9]);
        assert!(strip_custom_section(b"nope", "x").is_err());
    }

    #[test]
    fn memory_grow_patch_detaches_the_old_buffer() {
        let src = "function g(p){var newBuffer = new ArrayBuffer(Math_imul(n, 65536));var newHEAP8 = new Int8Array(newBuffer);newHEAP8.set(HEAP8);HEAP8 = newHEAP8;}";
        let out = patch_memory_grow(src).expect("patch");
        assert!(out.contains("var newBuffer = buffer.transfer(Math_imul(n, 65536));"), "{out}");
        assert!(!out.contains("newHEAP8.set(HEAP8)"));
        assert!(patch_memory_grow("function g(){}").is_err());
    }
}
