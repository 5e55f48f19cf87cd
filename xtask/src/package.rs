//! `cargo xtask package`: store-ready archives of the built extension in `dist/packages/`:
//! `nova-<version>-chrome.zip` for the Chrome Web Store (and Edge Add-ons) and an unsigned
//! `nova-<version>-firefox.xpi` for addons.mozilla.org signing.
//!
//! Both come from the same `dist/extension`; only the manifest differs: the store copies drop
//! `key` (the stores assign the id; `key` only pins it for unpacked development builds); the
//! Chrome copy drops what only Firefox reads (`background.scripts`, `browser_specific_settings`,
//! the `webRequestBlocking` permission that Firefox needs to report the browser's own sign-in
//! dialog), which Chromium reports as unrecognised; the Firefox copy drops
//! `background.service_worker`, which Firefox ignores (its background is the `scripts` event page).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, bail};
use serde_json::Value;

use crate::build;
use crate::cmd::step;

/// Builds and writes both packages; their paths.
pub fn package() -> anyhow::Result<Vec<PathBuf>> {
    let built = build::build()?;
    let out = built.dist.join("packages");
    std::fs::create_dir_all(&out)?;
    let version = env!("CARGO_PKG_VERSION");
    let mut written = Vec::new();
    for (name, firefox) in
        [(format!("nova-{version}-chrome.zip"), false), (format!("nova-{version}-firefox.xpi"), true)]
    {
        let files = collect(&built.extension)?;
        let mut entries = Vec::with_capacity(files.len());
        for (rel, path) in files {
            let mut bytes = std::fs::read(&path)?;
            if rel == "manifest.json" {
                bytes = store_manifest(&bytes, firefox)?;
            }
            entries.push((rel, bytes));
        }
        if firefox {
            let staging = out.join("firefox-unpacked");
            let _ = std::fs::remove_dir_all(&staging);
            for (rel, bytes) in &entries {
                let p = staging.join(rel);
                std::fs::create_dir_all(p.parent().context("path")?)?;
                std::fs::write(p, bytes)?;
            }
            step("web-ext lint of the Firefox package");
            web_ext_lint(&staging)?;
        }
        let path = out.join(&name);
        std::fs::write(&path, zip(&entries)?)?;
        step(&format!("wrote {} ({} files)", path.display(), entries.len()));
        written.push(path);
    }
    Ok(written)
}

/// Every file under `root`, as (forward-slash relative path, full path), sorted.
fn collect(root: &Path) -> anyhow::Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for e in std::fs::read_dir(&dir)? {
            let p = e?.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                let rel = p
                    .strip_prefix(root)?
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy())
                    .collect::<Vec<_>>();
                out.push((rel.join("/"), p));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// A permission Chromium refuses in a version 3 manifest: Firefox fires `onAuthRequired` only
/// to a blocking listener (which Nova never uses to answer or hold a sign-in).
const FIREFOX_ONLY_PERMISSION: &str = "webRequestBlocking";

/// The manifest as a store wants it.
fn store_manifest(bytes: &[u8], firefox: bool) -> anyhow::Result<Vec<u8>> {
    let mut m: Value = serde_json::from_slice(bytes).context("manifest.json")?;
    if let Some(o) = m.as_object_mut() {
        o.remove("key");
        if !firefox {
            o.remove("browser_specific_settings");
            if let Some(p) = o.get_mut("permissions").and_then(Value::as_array_mut) {
                p.retain(|p| p != FIREFOX_ONLY_PERMISSION);
            }
        }
    }
    if let Some(bg) = m.get_mut("background").and_then(Value::as_object_mut) {
        bg.remove(if firefox { "service_worker" } else { "scripts" });
    }
    Ok(serde_json::to_vec_pretty(&m)?)
}

/// A zip archive (deflate, fixed timestamps, so the same input gives the same bytes).
fn zip(entries: &[(String, Vec<u8>)]) -> anyhow::Result<Vec<u8>> {
    const DOS_TIME: u16 = 0;
    const DOS_DATE: u16 = (1 << 5) | 1; // 1980-01-01
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (name, data) in entries {
        let mut crc = flate2::Crc::new();
        crc.update(data);
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(data)?;
        let packed = enc.finish()?;
        let offset = u32::try_from(out.len()).context("archive over 4 GB")?;
        let (csize, usize_) = (u32::try_from(packed.len())?, u32::try_from(data.len())?);
        let name_len = u16::try_from(name.len())?;
        let mut local = 0x0403_4b50u32.to_le_bytes().to_vec();
        for v in [20u16, 0, 8, DOS_TIME, DOS_DATE] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc.sum(), csize, usize_] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name_len, 0] {
            local.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&local);
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(&packed);

        central.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
        for v in [20u16, 20, 0, 8, DOS_TIME, DOS_DATE] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc.sum(), csize, usize_] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        for v in [name_len, 0, 0, 0, 0] {
            central.extend_from_slice(&v.to_le_bytes());
        }
        central.extend_from_slice(&(0o100_644u32 << 16).to_le_bytes());
        central.extend_from_slice(&offset.to_le_bytes());
        central.extend_from_slice(name.as_bytes());
    }
    let cd_offset = u32::try_from(out.len())?;
    let cd_size = u32::try_from(central.len())?;
    out.extend_from_slice(&central);
    let count = u16::try_from(entries.len()).context("over 65535 files")?;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, count, count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&cd_size.to_le_bytes());
    out.extend_from_slice(&cd_offset.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    Ok(out)
}

/// `web-ext lint` on the built extension: errors fail the run, warnings are listed.
pub fn web_ext_lint(extension: &std::path::Path) -> anyhow::Result<()> {
    let bin = crate::ensure::ensure_npm_tools()?;
    let out = Command::new(bin.join("web-ext"))
        .args(["lint", "--no-input", "--output", "json", "--source-dir"])
        .arg(extension)
        .output()?;
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).map_err(|e| {
        anyhow::anyhow!("web-ext lint gave no JSON ({e}): {}", String::from_utf8_lossy(&out.stderr))
    })?;
    let list = |kind: &str| report[kind].as_array().cloned().unwrap_or_default();
    for w in list("warnings") {
        step(&format!(
            "web-ext warning {}: {}",
            w["code"].as_str().unwrap_or(""),
            w["message"].as_str().unwrap_or("")
        ));
    }
    let errors = list("errors");
    if !errors.is_empty() {
        for e in &errors {
            step(&format!("web-ext ERROR {}: {} ({})", e["code"], e["message"], e["file"]));
        }
        bail!("web-ext lint found {} error(s) in {}", errors.len(), extension.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::io::Read as _;

    fn u16_at(b: &[u8], i: usize) -> usize {
        usize::from(u16::from_le_bytes([b[i], b[i + 1]]))
    }
    fn u32_at(b: &[u8], i: usize) -> usize {
        u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]) as usize
    }

    /// Reads an archive back through its central directory, inflating and checking each CRC.
    fn unzip(b: &[u8]) -> Vec<(String, Vec<u8>)> {
        let end = b.len() - 22;
        assert_eq!(u32_at(b, end), 0x0605_4b50, "end of central directory");
        let (count, mut at) = (u16_at(b, end + 10), u32_at(b, end + 16));
        let mut out = Vec::new();
        for _ in 0..count {
            assert_eq!(u32_at(b, at), 0x0201_4b50);
            let (crc, csize, name_len, local) =
                (u32_at(b, at + 16), u32_at(b, at + 20), u16_at(b, at + 28), u32_at(b, at + 42));
            let name = String::from_utf8(b[at + 46..at + 46 + name_len].to_vec()).expect("utf8");
            assert_eq!(u32_at(b, local), 0x0403_4b50);
            let data_at = local + 30 + u16_at(b, local + 26) + u16_at(b, local + 28);
            let mut data = Vec::new();
            flate2::read::DeflateDecoder::new(&b[data_at..data_at + csize])
                .read_to_end(&mut data)
                .expect("inflate");
            let mut c = flate2::Crc::new();
            c.update(&data);
            assert_eq!(c.sum() as usize, crc, "{name}");
            out.push((name, data));
            at += 46 + name_len;
        }
        out
    }

    #[test]
    fn archives_read_back_identically_and_are_reproducible() {
        let entries = vec![
            ("manifest.json".to_owned(), b"{\"a\": 1}".to_vec()),
            (
                "pkg/nova_extension_bg.wasm".to_owned(),
                (0..70_000u32).flat_map(|i| (i % 251).to_le_bytes()).collect(),
            ),
            ("empty.txt".to_owned(), Vec::new()),
        ];
        let a = zip(&entries).expect("zip");
        assert_eq!(unzip(&a), entries);
        assert_eq!(zip(&entries).expect("zip"), a, "same input, same bytes");
    }

    #[test]
    fn store_manifests_drop_the_dev_key_and_firefox_drops_the_worker() {
        let dev = br#"{"key": "K", "background": {"service_worker": "background.js", "scripts": ["background.js"], "type": "module"},
                       "permissions": ["webRequest", "webRequestBlocking"],
                       "browser_specific_settings": {"gecko": {"id": "nova@nova.io"}}}"#;
        let chrome: Value =
            serde_json::from_slice(&store_manifest(dev, false).expect("chrome")).expect("json");
        assert!(chrome.get("key").is_none() && chrome.get("browser_specific_settings").is_none());
        assert_eq!(chrome["background"], json!({"service_worker": "background.js", "type": "module"}));
        assert_eq!(chrome["permissions"], json!(["webRequest"]));
        let firefox: Value = serde_json::from_slice(&store_manifest(dev, true).expect("ff")).expect("json");
        assert!(firefox.get("key").is_none() && firefox["background"].get("service_worker").is_none());
        assert_eq!(firefox["background"]["scripts"][0], "background.js");
        assert_eq!(firefox["browser_specific_settings"]["gecko"]["id"], "nova@nova.io");
        assert_eq!(firefox["permissions"], json!(["webRequest", "webRequestBlocking"]));
    }
}
