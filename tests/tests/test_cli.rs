//! `nova install`, `nova doctor` and `nova mcp --print-config` against a running Nova.

use std::process::Command;

use nova_e2e::Nova;
use serde_json::Value;

fn nova_cmd(nova: &Nova, home: &std::path::Path) -> Command {
    let mut cmd = Command::new(&nova.dist.host);
    cmd.env("HOME", home).env_remove("XDG_CONFIG_HOME").arg("--data-dir").arg(&nova.data);
    cmd
}

#[tokio::test(flavor = "multi_thread")]
async fn install_doctor_and_print_config_describe_a_running_nova() -> anyhow::Result<()> {
    let nova = Nova::start().await?;
    let home = tempfile::tempdir()?;

    // Before installing, doctor names the missing manifest and its fix, and fails.
    let before = nova_cmd(&nova, home.path()).args(["doctor"]).output()?;
    let text = String::from_utf8_lossy(&before.stdout).into_owned();
    assert!(!before.status.success(), "{text}");
    assert!(text.contains("ok    hub running"), "{text}");
    assert!(text.contains("ok    relay socket reachable"), "{text}");
    assert!(text.contains("ok    store integrity"), "{text}");
    assert!(text.contains("ok    free disk"), "{text}");

    let install = nova_cmd(&nova, home.path())
        .args(["install", "--browser", "chromium", "--browser", "firefox"])
        .output()?;
    assert!(install.status.success(), "{}", String::from_utf8_lossy(&install.stderr));
    let manifest = home.path().join(".config/chromium/NativeMessagingHosts/io.nova.host.json");
    let m: Value = serde_json::from_slice(&std::fs::read(&manifest)?)?;
    assert_eq!(m["path"], nova.dist.host.display().to_string());
    assert!(home.path().join(".mozilla/native-messaging-hosts/io.nova.host.json").exists());

    let after = nova_cmd(&nova, home.path()).args(["doctor"]).output()?;
    let text = String::from_utf8_lossy(&after.stdout).into_owned();
    assert!(text.contains("ok    chromium native-host manifest"), "{text}");
    assert!(text.contains("ok    firefox native-host manifest"), "{text}");

    let config = nova_cmd(&nova, home.path()).args(["mcp", "--print-config"]).output()?;
    let config: Value = serde_json::from_slice(&config.stdout)?;
    assert_eq!(config["mcpServers"]["nova"]["args"][0], "mcp");
    assert_eq!(config["mcpServers"]["nova"]["args"][2], nova.data.display().to_string());
    let hub = nova_e2e::hub_records(&nova.data).remove(0);
    assert_eq!(config["http"]["url"], hub.http_url.as_str());
    assert!(config["http"]["tokenFile"].as_str().is_some_and(|p| p.ends_with("mcp-token")));

    let uninstall = nova_cmd(&nova, home.path()).args(["uninstall"]).output()?;
    assert!(uninstall.status.success());
    assert!(!manifest.exists());
    Ok(())
}
