//! Resource faults with the real browser, extension and hub at the product's default gates
//! (docs/gates.md `safety.store_unwritable`, docs/support.md "When Nova will not start"): a
//! full disk under the data dir (a small tmpfs the test mounts, as root), a store another
//! program holds locked, a damaged store and a read-only data dir at start.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use nova_e2e::Nova;
use nova_e2e::agent::Agent;
use rmcp::model::CallToolResult;
use serde_json::{Value, json};

/// A tmpfs mounted over a directory for the length of a test.
struct Mounted(PathBuf);

impl Mounted {
    fn tmpfs(dir: &Path, size_mb: u32) -> anyhow::Result<Self> {
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size_mb}m,mode=0700"), "tmpfs"])
            .arg(dir)
            .status()?;
        anyhow::ensure!(
            status.success(),
            "mounting a {size_mb} MB tmpfs on {} failed ({status}): this test needs root to give the data \
             dir a small file system of its own",
            dir.display()
        );
        Ok(Self(dir.to_path_buf()))
    }

    fn read_only(&self) -> anyhow::Result<()> {
        let status = Command::new("mount").args(["-o", "remount,ro"]).arg(&self.0).status()?;
        anyhow::ensure!(status.success(), "remounting {} read-only failed ({status})", self.0.display());
        Ok(())
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

/// Writes `dir/filler` until the file system is full; returns the bytes written.
fn fill(dir: &Path) -> anyhow::Result<u64> {
    use std::io::Write;
    let mut f = std::fs::File::create(dir.join("filler"))?;
    let chunk = vec![0x4e_u8; 1 << 20];
    let mut written = 0u64;
    loop {
        match f.write(&chunk) {
            Ok(0) => anyhow::bail!("the file system took no more bytes without saying it is full"),
            Ok(n) => written += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::StorageFull => break,
            Err(e) => return Err(e.into()),
        }
    }
    // Whatever is left below a whole chunk.
    let byte = [0x4e_u8];
    while f.write(&byte).is_ok_and(|n| n == 1) {
        written += 1;
    }
    let _ = f.sync_all();
    Ok(written)
}

fn aag(r: &CallToolResult) -> Value {
    r.meta.as_ref().and_then(|m| m.0.get("io.nova/aag").cloned()).unwrap_or(Value::Null)
}

/// Folds the WAL into the store file and cuts it to nothing, so that the hub's next write has to
/// grow a file (a full disk then refuses it at once instead of after the WAL's old room).
fn checkpoint(db: &Path) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(db)?;
    conn.busy_timeout(Duration::from_secs(5))?;
    for _ in 0..50 {
        let busy: i64 = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))?;
        if busy == 0 {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    anyhow::bail!("the WAL of {} stayed busy", db.display())
}

fn nova_cli(nova: &Nova, args: &[&str]) -> anyhow::Result<(bool, String)> {
    let out = nova.cli().args(args).output()?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Ok((out.status.success(), text))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_disk_refuses_work_keeps_the_hub_and_recovers_by_itself() -> anyhow::Result<()> {
    let mut nova = Nova::without_browser().await?;
    let mount = Mounted::tmpfs(&nova.data, 64)?;
    // The free-space gate would see the full disk first; at 0 MB it stands aside, so this test
    // meets what it is about: a write the disk refuses (a quota, a disk filling between checks).
    std::fs::write(nova.data.join("settings.json"), r#"{"diskSpaceLowMb": 0}"#)?;
    nova.launch_browser().await?;
    let hub = nova.hub_pid().ok_or_else(|| anyhow::anyhow!("no hub"))?;
    let mut a = Agent::new(&nova, "faults").await?;
    a.ready().await?;
    a.visit(&nova.url("counter.html?key=disk")).await?;
    let tab = a.tab.clone().ok_or_else(|| anyhow::anyhow!("no tab"))?;
    let contract = json!({
        "actionKind": "submit_form",
        "postconditions": {"success": {"all": [{"factKey": "dom.exists(#submitted)", "operator": "eq", "expected": true}]}},
        "stabilityWindowMs": 3000,
        "stabilityMs": 300
    });

    checkpoint(&nova.store_path())?;
    let filled = fill(&nova.data)?;
    anyhow::ensure!(filled > 1 << 20, "only {filled} bytes fitted");

    // Reads go on until the writer meets the full disk; from then on work is refused.
    let mut perceives = a.calls_of("nova.perceive");
    let mut block = Value::Null;
    for i in 0..60 {
        let r = a
            .client
            .call("nova.perceive", json!({"targetId": tab, "agentId": "faults", "maxElements": 10 + i}))
            .await?;
        perceives += 1;
        block = aag(&r);
        if !block.is_null() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(
        (block["gateId"].clone(), block["forceBypassAvailable"].clone()),
        (json!("safety.store_unwritable"), json!(false)),
        "no call was refused while the store could not be written: {block}"
    );
    let error = block["details"]["error"].as_str().unwrap_or_default();
    assert!(error.contains("full"), "the block names the disk: {block}");
    assert!(block["details"]["rowsWaiting"].as_u64().is_some_and(|n| n >= 1), "{block}");

    // A guarded submit is refused before anything reaches the page.
    let r = a
        .client
        .call(
            "nova.click_selector",
            json!({"targetId": tab, "agentId": "faults", "selector": "#go", "transitionContract": contract}),
        )
        .await?;
    assert_eq!(aag(&r)["gateId"], "safety.store_unwritable", "{r:?}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(nova.fixtures.count("disk"), 0, "the submit reached the server while the disk was full");
    assert_eq!(nova.hub_pid(), Some(hub), "the hub stays up on a full disk");

    // Space returns: the hub notices by itself and the kept rows are written.
    std::fs::remove_file(nova.data.join("filler"))?;
    let mut free = false;
    for i in 0..50 {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let r = a
            .client
            .call("nova.perceive", json!({"targetId": tab, "agentId": "faults", "maxElements": 80 + i}))
            .await?;
        perceives += 1;
        if aag(&r).is_null() {
            assert_ne!(r.is_error, Some(true), "{r:?}");
            free = true;
            break;
        }
    }
    assert!(free, "work stayed refused after space returned");
    let done =
        a.step("nova.click_selector", json!({"selector": "#go", "transitionContract": contract})).await?;
    assert_eq!(done["guardedCommit"]["verificationStatus"], "verified_success", "{done}");
    assert_eq!(nova.fixtures.count("disk"), 1, "submitted once, after the disk had room");
    assert_eq!(nova.hub_pid(), Some(hub));

    // Nothing lost, nothing half written: every perceive is a row (the refused ones and those
    // whose rows waited in memory), and the store is sound.
    let rows =
        nova.count_until("SELECT count(*) FROM observations WHERE tool = 'nova.perceive'", perceives as i64)?;
    assert_eq!(rows, perceives as i64, "perceive rows in the store");
    let refused = nova.count_until(
        "SELECT count(*) FROM observations WHERE reason_code = 'safety.store_unwritable'",
        (perceives - a.calls_of("nova.perceive")) as i64,
    )?;
    assert!(refused >= 2, "the refused calls are recorded: {refused}");
    let (ok, text) = nova_cli(&nova, &["store", "check"])?;
    assert!(ok && text.contains("SOUND"), "{text}");
    drop(a);
    drop(mount);
    Ok(())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_damaged_store_or_a_read_only_data_dir_is_refused_with_the_fix() -> anyhow::Result<()> {
    // A store whose pages are garbage behind a valid header.
    let mut nova = Nova::without_browser().await?;
    let mut bytes = b"SQLite format 3\0".to_vec();
    bytes.extend((0..65_536u32).map(|i| (i * 7 % 251) as u8));
    std::fs::write(nova.store_path(), &bytes)?;
    nova.spawn_browser().await?;
    let c = nova.client().await?;
    let r = c.structured("nova.perceive", json!({})).await?;
    assert_eq!(
        (r["reasonCode"].clone(), r["retryable"].clone()),
        (json!("store_damaged"), json!(false)),
        "{r}"
    );
    let message = r["message"].as_str().unwrap_or_default();
    let db = nova.store_path().display().to_string();
    assert!(message.contains(&db) && message.contains("move it aside"), "{message}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(nova.hub_pid().is_none(), "a hub came up on a damaged store");
    assert_eq!(std::fs::read(nova.store_path())?, bytes, "the damaged store is left byte for byte");
    let (ok, text) = nova_cli(&nova, &["doctor"])?;
    assert!(!ok && text.contains("store_damaged"), "{text}");
    c.close().await?;
    drop(nova);

    // A data dir on a file system mounted read-only.
    let mut nova = Nova::without_browser().await?;
    let mount = Mounted::tmpfs(&nova.data, 8)?;
    std::fs::create_dir(nova.data.join("logs"))?;
    mount.read_only()?;
    // The harness keeps the browser's own log under the data dir: that one folder stays writable.
    let logs = Mounted::tmpfs(&nova.data.join("logs"), 8)?;
    nova.spawn_browser().await?;
    let c = nova.client().await?;
    let r = c.structured("nova.perceive", json!({})).await?;
    assert_eq!(r["reasonCode"], "data_dir_unwritable", "{r}");
    let message = r["message"].as_str().unwrap_or_default();
    assert!(message.contains(&nova.data.display().to_string()) && message.contains("writable"), "{message}");
    assert!(nova.hub_pid().is_none());
    c.close().await?;
    drop(logs);
    drop(mount);
    Ok(())
}

/// Another program holding the store's write lock (a `sqlite3` shell left in a write
/// transaction, say) delays work and loses nothing: a call that changes something is answered
/// only once its row is committed (docs/tasks.md "Evidence (TOB)"), so it waits for the lock,
/// and once it is answered its row is in the store. A hub killed right after answering keeps
/// the record for the same reason.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_is_answered_only_once_its_row_is_committed() -> anyhow::Result<()> {
    let nova = Nova::start_with_default_gates().await?;
    let mut a = Agent::new(&nova, "patient").await?;
    a.ready().await?;
    a.visit(&nova.url("basic.html")).await?;
    a.step("nova.type_selector", json!({"selector": "#plain", "text": "one"})).await?;
    let rows = "SELECT COUNT(*) FROM observations WHERE tool = 'nova.type_selector'";
    nova.count_until(rows, 1)?;

    let lock = rusqlite::Connection::open(nova.store_path())?;
    lock.execute_batch("BEGIN IMMEDIATE")?;
    let mut call = std::pin::pin!(a.client.call(
        "nova.type_selector",
        json!({"selector": "#plain", "text": "two", "agentId": "patient", "targetId": a.tab})
    ));
    // Long enough for the page to have typed and the hub to have answered, well within the
    // store's 5-second busy timeout.
    let early = tokio::time::timeout(Duration::from_millis(1500), &mut call).await;
    assert!(
        early.is_err(),
        "answered while another program held the write lock, before its row could be committed: {early:?}"
    );
    let seen: i64 = lock.query_row(rows, [], |r| r.get(0))?;
    assert_eq!(seen, 1, "nothing was committed while the lock was held");
    lock.execute_batch("COMMIT")?;
    let answered = call.await?;
    assert_eq!(answered.is_error, Some(false), "{:?}", answered.structured_content);
    assert_eq!(
        nova_e2e::store::query_i64(&nova.store_path(), rows)?,
        2,
        "the row is committed by the time the call is answered"
    );

    // A refusal is a record too: with STOP engaged, a typing call blocked by the gate (nothing
    // else for the hub to write) is answered only once its row is committed.
    let stop = nova.cli().arg("stop").output()?;
    assert!(stop.status.success(), "nova stop: {}", String::from_utf8_lossy(&stop.stderr));
    let blocked_rows = "SELECT COUNT(*) FROM observations WHERE tool = 'nova.type_selector'
         AND outcome_kind = 'blocked_preflight' AND error_code = 'aag_blocked:safety.emergency_stop'";
    lock.execute_batch("BEGIN IMMEDIATE")?;
    let mut call = std::pin::pin!(a.client.call(
        "nova.type_selector",
        json!({"selector": "#plain", "text": "three", "agentId": "patient", "targetId": a.tab})
    ));
    let early = tokio::time::timeout(Duration::from_millis(1500), &mut call).await;
    assert!(early.is_err(), "a refusal was answered before its row could be committed: {early:?}");
    lock.execute_batch("COMMIT")?;
    let refused = call.await?;
    assert_eq!(aag(&refused)["gateId"], "safety.emergency_stop", "{:?}", refused.structured_content);
    assert_eq!(nova_e2e::store::query_i64(&nova.store_path(), blocked_rows)?, 1, "the refusal is committed");
    Ok(())
}
