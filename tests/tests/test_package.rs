//! The store packages of `cargo xtask package` (run by `cargo xtask test` before this suite):
//! the Firefox `.xpi` loads and works in Firefox; the Chrome Web Store zip carries the same
//! files as the unpacked build with the development `key` removed.

use std::path::PathBuf;

use nova_e2e::{BrowserKind, Nova};
use serde_json::{Value, json};

fn package(suffix: &str) -> anyhow::Result<PathBuf> {
    let dist = nova_e2e::Dist::locate()?;
    let dir = dist.extension.parent().map(|d| d.join("packages")).unwrap_or_default();
    let found = std::fs::read_dir(&dir)
        .map_err(|e| anyhow::anyhow!("{}: {e}; run `cargo xtask package` first", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(suffix));
    found.ok_or_else(|| anyhow::anyhow!("no *{suffix} in {}; run `cargo xtask package`", dir.display()))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_store_packages_hold_the_build_and_the_xpi_runs_in_firefox() -> anyhow::Result<()> {
    match BrowserKind::from_env() {
        BrowserKind::Firefox => {
            let mut nova = Nova::without_browser().await?;
            nova.dist.extension = package("-firefox.xpi")?;
            nova.launch_browser().await?;
            let c = nova.client().await?;
            c.structured("nova.tools_bundle", json!({"bundle": "browser_automation"})).await?;
            let nav = c.structured("nova.navigate", json!({"url": nova.url("basic.html")})).await?;
            assert_eq!(nav["title"], "Basic fixture", "{nav}");
            let page = c.structured("nova.perceive", json!({})).await?;
            assert!(page["text"].as_str().unwrap_or_default().contains("basic fixture"), "{page}");
        }
        BrowserKind::Chromium => {
            let zip = std::fs::read(package("-chrome.zip")?)?;
            let dist = nova_e2e::Dist::locate()?;
            // Every file of the build is in the archive (names are stored uncompressed).
            let names = |root: &std::path::Path| -> Vec<String> {
                let mut out = Vec::new();
                let mut dirs = vec![root.to_path_buf()];
                while let Some(d) = dirs.pop() {
                    for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                        let p = e.path();
                        if p.is_dir() {
                            dirs.push(p);
                        } else if let Ok(rel) = p.strip_prefix(root) {
                            out.push(rel.to_string_lossy().replace('\\', "/"));
                        }
                    }
                }
                out
            };
            let haystack = String::from_utf8_lossy(&zip);
            for name in names(&dist.extension) {
                assert!(haystack.contains(&name), "{name} missing from the store zip");
            }
            let dev: Value = serde_json::from_slice(&std::fs::read(dist.extension.join("manifest.json"))?)?;
            assert!(dev.get("key").is_some(), "the unpacked build pins its id with `key`");
            assert!(!haystack.contains(dev["key"].as_str().unwrap_or("-")), "the store zip has no `key`");
        }
    }
    Ok(())
}
