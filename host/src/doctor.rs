//! `nova doctor`: checks the installation and says how to fix each problem.

use std::io::Write;

use crate::install;
use crate::ipc::HubRecord;
use crate::paths::DataDir;

/// AAG `safety.disk_space_low`: below 500 MB free Nova blocks work.
pub const MIN_FREE_BYTES: u64 = 500 * 1024 * 1024;

/// One check's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// `Ok(detail)` or `Err((problem, fix))`.
    pub result: Result<String, (String, String)>,
}

/// Runs every check.
pub fn run_checks(data: &DataDir) -> Vec<Check> {
    let mut checks = manifest_checks();
    let hubs = HubRecord::all(data);
    let live: Vec<&HubRecord> = hubs.iter().filter(|h| crate::ipc::reachable(&h.socket)).collect();
    checks.push(Check {
        name: "hub running".into(),
        result: match live.first() {
            Some(h) => Ok(format!("{} hub pid {} at {}", h.browser, h.pid, h.http_url)),
            None => Err((
                "no hub is running (the browser starts it when the extension connects)".into(),
                "start Nova with `cargo xtask run`, or open your browser with the Nova extension".into(),
            )),
        },
    });
    checks.push(Check {
        name: "relay socket reachable".into(),
        result: match (live.first(), hubs.first()) {
            (Some(h), _) => Ok(h.socket.display().to_string()),
            (None, Some(h)) => Err((
                format!("{} does not accept connections (stale registration)", h.socket.display()),
                "restart the browser; the next hub replaces the registration".into(),
            )),
            (None, None) => Err(("no hub registered".into(), "see `hub running`".into())),
        },
    });
    checks.push(Check { name: "store integrity".into(), result: store_check(data) });
    checks.push(Check { name: "free disk".into(), result: disk_check(data) });
    checks.push(Check { name: "adapters".into(), result: adapter_check(data) });
    checks.push(Check { name: "settings".into(), result: settings_check(data) });
    checks.push(Check {
        name: "emergency stop".into(),
        result: match crate::store::open_read_only(&data.db())
            .ok()
            .and_then(|c| crate::aag::control::read_stop(&c))
        {
            Some(stop) => Err((
                format!("engaged by {} at {} ms: every agent call is blocked", stop.by, stop.at_ms),
                "release it with `nova resume` (or the popup) when agents may work again".into(),
            )),
            None => Ok("not engaged".into()),
        },
    });
    checks
}

/// One check per detected browser variant or manifest already written; a failure names the
/// `nova install` that fixes it.
fn manifest_checks() -> Vec<Check> {
    let targets = match install::doctor_targets() {
        Ok(targets) => targets,
        Err(e) => {
            return vec![Check {
                name: "browsers".into(),
                result: Err((e.to_string(), "run Nova on Linux, macOS or Windows with HOME set".into())),
            }];
        }
    };
    if targets.is_empty() {
        return vec![Check {
            name: "browsers".into(),
            result: Err((
                "no supported browser found for this user".into(),
                "install Chromium, Chrome, Edge, Brave or Firefox, then `nova install`".into(),
            )),
        }];
    }
    targets
        .iter()
        .map(|target| Check {
            name: format!("{} native-host manifest", target.label()),
            result: install::check(target, &install::RegExe)
                .map(|p| format!("{} -> {}", target.manifest.display(), p.display()))
                .map_err(|problem| {
                    (problem, format!("run `nova install --browser {}`", target.browser.name()))
                }),
        })
        .collect()
}

fn settings_check(data: &DataDir) -> Result<String, (String, String)> {
    match crate::settings::Settings::try_load(data) {
        Ok(s) if s == crate::settings::Settings::default() => Ok("defaults (no settings.json)".into()),
        Ok(s) => {
            Ok(format!("{} gate mode(s) set, {} domain rule(s)", s.gate_modes.len(), s.domain_policy.len()))
        }
        Err(e) => {
            Err((e, "fix settings.json (docs/gates.md and docs/tasks.md list the keys) or remove it".into()))
        }
    }
}

fn adapter_check(data: &DataDir) -> Result<String, (String, String)> {
    let (all, errors) = crate::adapters::load(&data.adapters());
    if let Some(first) = errors.first() {
        return Err((
            format!("{} adapter file(s) skipped: {first}", errors.len()),
            "fix the file (shared/adapters/README.md lists the fields) or remove it".into(),
        ));
    }
    let names: Vec<&str> = all.iter().map(|a| a.name.as_str()).collect();
    Ok(format!("{} ({})", names.join(", "), data.adapters().display()))
}

fn store_check(data: &DataDir) -> Result<String, (String, String)> {
    // The checks a hub makes before it starts (writable data dir, integrity, schema), with
    // their fixes.
    crate::preflight::check(data).map_err(|r| (r.code.to_owned(), r.message))?;
    let db = data.db();
    if !db.exists() {
        return Ok(format!("{} not created yet (created on first use)", db.display()));
    }
    let fix = format!("move {} aside; Nova creates a fresh store", db.display());
    let conn = crate::store::open_read_only(&db).map_err(|e| (e.to_string(), fix.clone()))?;
    let version = crate::store::schema_version(&conn).map_err(|e| (e.to_string(), fix))?;
    Ok(format!("{} ok, schema v{version}", db.display()))
}

fn disk_check(data: &DataDir) -> Result<String, (String, String)> {
    let mut dir = data.root().to_path_buf();
    while !dir.exists() {
        if !dir.pop() {
            break;
        }
    }
    let free = fs4::available_space(&dir)
        .map_err(|e| (format!("cannot read free space: {e}"), "check the data dir path".into()))?;
    let mb = free / (1024 * 1024);
    if free < MIN_FREE_BYTES {
        return Err((format!("only {mb} MB free at {}", dir.display()), "free at least 500 MB".into()));
    }
    Ok(format!("{mb} MB free"))
}

/// Prints the report; returns whether everything passed.
pub fn report(checks: &[Check], out: &mut impl Write) -> std::io::Result<bool> {
    let mut all_ok = true;
    for c in checks {
        match &c.result {
            Ok(detail) => writeln!(out, "ok    {}: {detail}", c.name)?,
            Err((problem, fix)) => {
                all_ok = false;
                writeln!(out, "FAIL  {}: {problem}\n      fix: {fix}", c.name)?;
            }
        }
    }
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check<'a>(checks: &'a [Check], name: &str) -> &'a Result<String, (String, String)> {
        &checks.iter().find(|c| c.name == name).expect("check present").result
    }

    #[test]
    fn a_bad_settings_file_and_an_engaged_stop_are_reported_with_their_fix() {
        let dir = tempfile::tempdir().expect("tmp");
        let data = DataDir::at(dir.path());
        data.ensure().expect("dirs");
        let checks = run_checks(&data);
        assert_eq!(check(&checks, "settings"), &Ok("defaults (no settings.json)".to_owned()));
        assert_eq!(check(&checks, "emergency stop"), &Ok("not engaged".to_owned()));

        std::fs::write(dir.path().join("settings.json"), r#"{"gateModes": {"loop.detected": "sometimes"}}"#)
            .expect("write");
        let conn = crate::store::open(&data.db()).expect("store");
        crate::aag::control::engage(&conn, "cli").expect("stop");
        let checks = run_checks(&data);
        let Err((problem, fix)) = check(&checks, "settings") else { panic!("bad settings pass") };
        assert!(problem.contains("sometimes") && fix.contains("settings.json"), "{problem}");
        let Err((problem, fix)) = check(&checks, "emergency stop") else { panic!("stop not reported") };
        assert!(problem.contains("engaged by cli") && fix.contains("nova resume"), "{problem}");
    }
}
