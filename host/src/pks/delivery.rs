//! What `nova.perceive` and `nova.navigate` carry of a site's knowledge (docs/pks.md, "On every
//! page"): `pks`, the site's active entries that fit the page's route, as much as `pksInclude`
//! asks (`off`, `summary`, `full`); `pksDedup`, whether that changed since this caller last got
//! it (the site's `content_rev`); `pksAdvice`; and `pksOnboarding` the first time a caller
//! reaches a site. What the page shows now always wins over what is stored.

use std::collections::HashMap;
use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use super::model::Context;
use super::summary::{Detail, describe, has_fragile_selectors};
use super::{Pks, matching, records, scope};
use crate::call::CallError;

/// Most entries listed in a summary.
pub const SUMMARY_MAX: usize = 8;
/// Deliveries to one caller and site between full refreshes, even when nothing changed.
pub const REFRESH_EVERY: u32 = 20;

/// How much of a site's knowledge a page read carries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Include {
    /// Only whether it changed.
    Off,
    /// Up to 8 active entries: id, type, verified, success rate, fragile selectors (default).
    #[default]
    Summary,
    /// Every active entry that fits, with fingerprint and playbook.
    Full,
}

/// What each caller was last given, per site (kept in the caller's session).
#[derive(Default)]
pub struct Delivered(Mutex<HashMap<(String, String), (i64, u32)>>);

/// What the page itself showed, for advice.
#[derive(Debug, Clone, Copy, Default)]
pub struct PageFacts {
    /// A consent banner is showing.
    pub consent_showing: bool,
    /// A control may open a native dialog (a file chooser).
    pub native_dialog: bool,
}

fn responsibilities() -> Value {
    json!([
        "What the page shows now wins over what is stored: use an entry only when its fingerprint is on the page (nova.phenomenon_apply checks it, acts and verifies).",
        "Report how a playbook you ran yourself went (nova.telemetry_report): entries are promoted and retired on that evidence.",
        "Store how to operate the site (nova.pks_upsert, nova.pks_upsert_hint), never what its pages say, and never a secret.",
    ])
}

/// The fields to add to a page read of `url` by `agent`, or none for a page that is not a site.
pub fn deliver(
    pks: &Pks,
    delivered: &Delivered,
    agent: &str,
    url: &str,
    include: Include,
    page: PageFacts,
) -> Result<Map<String, Value>, CallError> {
    let mut out = Map::new();
    let Ok(site) = scope::normalize(url) else { return Ok(out) };
    let rev = pks.with(|c| records::domain(c, &site))?.map_or(0, |d| d.content_rev);

    let (first, state) = {
        let mut seen = delivered.0.lock().unwrap_or_else(|p| p.into_inner());
        let slot = seen.entry((agent.to_owned(), site.clone()));
        let first = matches!(slot, std::collections::hash_map::Entry::Vacant(_));
        let (last_rev, calls) = slot.or_insert((-1, 0));
        *calls += 1;
        let refresh = *last_rev != rev || *calls % REFRESH_EVERY == 1;
        *last_rev = rev;
        let state = match (refresh, include) {
            (true, _) => "auto_refresh",
            (false, Include::Summary) => "summary_unchanged",
            (false, _) => "auto_unchanged",
        };
        (first, state)
    };
    let unchanged = state != "auto_refresh";
    // The site's entries are read only when something below uses them: a caller told
    // "unchanged" with no banner to judge and no onboarding due costs one small read.
    // (A first read always refreshes, so `!unchanged` covers it.)
    let entries = if !unchanged || page.consent_showing {
        pks.with(|c| records::entries(c, &site))?
    } else {
        Vec::new()
    };
    let path = url
        .split_once("://")
        .and_then(|(_, rest)| rest.find('/').map(|i| rest[i..].to_owned()))
        .unwrap_or_default();
    let asked = matching::Asked { route: Some(path), ..matching::Asked::default() };
    let active: Vec<&records::Entry> = entries
        .iter()
        .filter(|e| e.active())
        .filter(|e| {
            let ctx: Context = serde_json::from_value(e.context.clone()).unwrap_or_default();
            matching::context_fit(&ctx, &asked).is_ok()
        })
        .collect();
    // Success rates (a query each) only of the entries listed.
    let listed = match include {
        Include::Off => 0,
        _ if unchanged => 0,
        Include::Summary => active.len().min(SUMMARY_MAX),
        Include::Full => active.len(),
    };
    let now = crate::time::now_ms();
    let rates = if listed == 0 {
        Vec::new()
    } else {
        pks.with(|c| {
            active[..listed]
                .iter()
                .map(|e| records::success_rate(c, &site, &e.id, now))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?
    };
    // Unchanged since this caller's last read of the site: only that, in a few tokens.
    let mut body = if unchanged {
        json!({"unchanged": true, "contentRev": rev})
    } else {
        json!({"scope": site, "contentRev": rev, "include": include_name(include), "activeCount": active.len()})
    };
    match include {
        Include::Off => {}
        _ if unchanged => {}
        Include::Summary => {
            let list: Vec<Value> = active.iter().zip(&rates).map(|(e, r)| summary(e, *r)).collect();
            body["phenomena"] = json!(list);
            if active.len() > SUMMARY_MAX {
                body["more"] = json!(active.len() - SUMMARY_MAX);
            }
        }
        Include::Full => {
            body["phenomena"] = json!(
                active.iter().zip(&rates).map(|(e, r)| describe(e, *r, Detail::Full)).collect::<Vec<_>>()
            );
        }
    }
    out.insert("pks".into(), body);
    out.insert("pksDedup".into(), json!({"state": state, "contentRev": rev}));

    let mut advice = Vec::new();
    let consent_known = active.iter().any(|e| e.kind == "consent_cmp");
    if page.consent_showing && !consent_known {
        advice.push(json!({"kind": "pks_gap", "message": format!(
            "a consent banner is showing and nothing active is stored for it on {site}: \
             nova.pks_platform_seed detects the platforms Nova knows; nova.pks_upsert stores how to decline it")}));
    }
    if !active.is_empty() && !unchanged {
        let ids: Vec<&str> = active.iter().map(|e| e.id.as_str()).collect();
        advice.push(json!({"kind": "existing_pks_reuse", "phenomenonIds": ids, "message":
            "active entries fit this page: when one's situation is showing, nova.phenomenon_apply runs it and verifies"}));
    }
    let fragile: Vec<&str> = if unchanged {
        Vec::new()
    } else {
        active.iter().filter(|e| has_fragile_selectors(e)).map(|e| e.id.as_str()).collect()
    };
    if !fragile.is_empty() {
        advice.push(json!({"kind": "fragile_selectors", "phenomenonIds": fragile, "message":
            "these entries click generated or positional selectors that break when the site is rebuilt; prefer ids, data-testid, aria-label or name (nova.pks_patch)"}));
    }
    if page.native_dialog {
        advice.push(json!({"kind": "native_dialog_warning", "message":
            "a control here opens a native dialog (a file chooser) that no playbook can answer: put files in with nova.file_upload"}));
    }
    if !advice.is_empty() {
        out.insert("pksAdvice".into(), json!(advice));
    }
    if first {
        let mut types: Vec<&str> =
            entries.iter().filter(|e| e.deprecated.is_none()).map(|e| e.kind.as_str()).collect();
        types.sort_unstable();
        types.dedup();
        out.insert(
            "pksOnboarding".into(),
            json!({
                "scope": site, "knownEntries": entries.iter().filter(|e| e.deprecated.is_none()).count(),
                "activeEntries": entries.iter().filter(|e| e.active()).count(), "entryTypes": types,
                "responsibilities": responsibilities(),
            }),
        );
    }
    Ok(out)
}

fn summary(e: &records::Entry, rate: (Option<f64>, i64)) -> Value {
    let mut v = describe(e, rate, Detail::Summary);
    v["hasFragileSelectors"] = json!(has_fragile_selectors(e));
    v
}

fn include_name(i: Include) -> &'static str {
    match i {
        Include::Off => "off",
        Include::Summary => "summary",
        Include::Full => "full",
    }
}
