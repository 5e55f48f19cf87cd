//! Semantic learning (docs/learning.md, "Semantic learning"): richer situations the journal's
//! counts cannot capture, raised as opportunities the agent must resolve, and asked about on its
//! responses (`pksSemanticLearning`) until it does.
//!
//! Detectors, on a site where no stored entry covers the situation yet:
//! - `consent_cmp`: the agent answered a consent request (a click on a consent control, or a
//!   consent banner `nova.dismiss_blockers` closed);
//! - `login_wall`: a page read found a sign-in wall (`pageState: login_required`);
//! - `risky_repeat`: the third successful click in a session on a fragile selector (one that
//!   depends on position or generated names).
//!
//! An opportunity (`sem:{kind}:{origin}:{fingerprint}`) is `prompted` when raised, `warned`
//! after 3 further calls on its site without a resolution, `strict` after 6 (the
//! `pks.semantic_learning` gate speaks from `warned` on). A `nova.pks_upsert` of a matching
//! entry resolves it (`pksSemanticLearningResolution`); so does `nova.learn_resolve_opportunity`.
//! Leaving the site with opportunities open answers the navigation with a
//! `pksSemanticLearningBatchSummary`, once per opportunity.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::call::Session;
use crate::lcj::opportunities::{self, Opportunity};
use crate::lcj::{self, Call, keys};
use crate::pks::{fragile, records};

/// Successful clicks on one fragile selector, in one session, that raise `risky_repeat`.
pub const RISKY_REPEATS: u32 = 3;

/// Words that put a control on a consent surface.
const CONSENT_WORDS: &[&str] =
    &["cookie", "consent", "gdpr", "privacy", "onetrust", "didomi", "sp_message", "usercentrics", "cmp"];

/// Tools that resolve an opportunity rather than count against it.
const RESOLVING: &[&str] = &["nova.learn_resolve_opportunity", "nova.pks_upsert"];

/// Clicks on fragile selectors in a session, per site and selector.
#[derive(Default)]
pub struct Repeats(Mutex<HashMap<(String, String), u32>>);

/// What semantic learning reaches.
pub struct Semantic<'h> {
    /// The journal (where opportunities are kept; the same store as PKS).
    pub lcj: &'h lcj::Journal,
}

impl<'h> From<&'h crate::hub::Hub> for Semantic<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { lcj: &hub.lcj }
    }
}

fn short_hash(s: &str) -> String {
    Sha256::digest(s.as_bytes()).iter().take(6).map(|b| format!("{b:02x}")).collect()
}

fn opportunity(
    kind: &str,
    origin: &str,
    what: &str,
    confidence: f64,
    reason: String,
    evidence: Value,
    skeleton: Value,
) -> Opportunity {
    Opportunity::new(kind, origin, &short_hash(what), confidence, reason, evidence, skeleton)
}

fn consent_skeleton(selector: Option<&str>, text: Option<&str>) -> Value {
    json!({
        "type": "consent_cmp",
        "fingerprint": {"signals": [{"kind": "dom", "match": "<the banner's container selector>"}], "minConfidence": 0.6},
        "playbook": {"policy": "reject_preferred",
                     "actions": [{"type": "click", "selector": selector.unwrap_or("<the decline control's selector>"),
                                  "declaredPolarity": "reject", "targetVisibleText": text,
                                  "maxScope": "scoped_to_cmp_surface"}],
                     "verify": [{"type": "absent", "selector": "<the banner's container selector>", "timeoutMs": 3000}]},
        "context": {"routes": ["*"]},
    })
}

/// The situations `call` shows on `origin`; the site's stored entries are read only when a
/// detector's own condition holds (most calls read nothing).
fn detect(
    session: &Session,
    call: &Call,
    full: &Value,
    origin: &str,
    c: &rusqlite::Connection,
) -> rusqlite::Result<Vec<Opportunity>> {
    let cell: std::cell::OnceCell<Vec<records::Entry>> = std::cell::OnceCell::new();
    let entries =
        || -> &Vec<records::Entry> { cell.get_or_init(|| records::entries(c, origin).unwrap_or_default()) };
    let covered = |kind: &str| entries().iter().any(|e| e.deprecated.is_none() && e.kind == kind);
    let mut out = Vec::new();
    match call.tool.as_str() {
        "nova.click_selector" if call.success => {
            let Some(sel) = call.selector.as_deref().map(keys::selector_norm) else { return Ok(out) };
            let lower = sel.to_lowercase();
            if CONSENT_WORDS.iter().any(|w| lower.contains(w)) && !covered("consent_cmp") {
                out.push(opportunity(
                    "consent_cmp",
                    origin,
                    &sel,
                    0.7,
                    format!("a consent request on {origin} was answered with `{sel}` and Nova knows no consent entry for the site"),
                    json!({"tool": call.tool, "selector": sel, "url": call.url}),
                    consent_skeleton(Some(&sel), None),
                ));
            }
            if fragile::why(&sel).is_some() {
                let repeats = session.slots.get::<Repeats>();
                let mut counts = repeats.0.lock().unwrap_or_else(|p| p.into_inner());
                let n = counts.entry((origin.to_owned(), sel.clone())).or_insert(0);
                *n += 1;
                let covered_selector =
                    entries().iter().any(|e| crate::lcj::attribution::selectors(e).contains(&sel));
                if *n >= RISKY_REPEATS && !covered_selector {
                    out.push(opportunity(
                        "risky_repeat",
                        origin,
                        &sel,
                        0.6,
                        format!(
                            "`{sel}` was clicked {n} times on {origin} and {}: store the step with a stable selector",
                            fragile::why(&sel).unwrap_or("it is fragile")
                        ),
                        json!({"tool": call.tool, "selector": sel, "clicks": *n, "why": fragile::why(&sel)}),
                        json!({"type": "custom", "fingerprint": {"signals": [{"kind": "dom", "match": "<a stable selector of the situation>"}]},
                               "playbook": {"policy": "custom", "actions": [{"type": "click", "selector": "<a stable selector for the control>",
                                            "declaredPolarity": "noop"}]}, "context": {"routes": ["*"]}}),
                    ));
                }
            }
        }
        "nova.dismiss_blockers" if call.success => {
            let consent = full["dismissed"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|d| d["kind"] == "consent" && d["gone"] == true);
            if let Some(d) = consent.filter(|_| !covered("consent_cmp")) {
                let control = d["control"].as_str().unwrap_or_default();
                out.push(opportunity(
                    "consent_cmp",
                    origin,
                    control,
                    0.75,
                    format!("a consent banner on {origin} was dismissed with {control} and Nova knows no consent entry for the site"),
                    json!({"tool": call.tool, "control": control, "text": d["text"], "url": call.url}),
                    consent_skeleton(None, d["control"].as_str().and_then(|c| c.split('"').nth(1))),
                ));
            }
        }
        "nova.perceive" | "nova.navigate"
            if call.success && full["pageState"] == "login_required" && !covered("login_wall") =>
        {
            let path = call
                .url
                .as_deref()
                .unwrap_or_default()
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .to_owned();
            out.push(opportunity(
                "login_wall",
                origin,
                &path,
                0.7,
                format!("{origin} asks to sign in before its content ({path}) and Nova knows no sign-in wall entry for the site"),
                json!({"tool": call.tool, "url": path, "pageState": "login_required"}),
                json!({"type": "login_wall", "fingerprint": {"signals": [{"kind": "dom", "match": "input[type=password]"},
                                                                      {"kind": "text", "match": "<the wall's heading>"}]},
                       "playbook": {"policy": "warn", "actions": [], "verify": []}, "context": {"routes": [path]}}),
            ));
        }
        _ => {}
    }
    Ok(out)
}

/// The prompt for an open opportunity.
pub fn prompt(o: &Opportunity) -> Value {
    json!({
        "gateId": crate::aag::gate::SEMANTIC_LEARNING, "status": o.state, "opportunityId": o.id, "kind": o.kind,
        "origin": o.origin, "fingerprint": o.fingerprint, "confidence": o.confidence, "reason": o.reason,
        "whyAutoUpsertIsInsufficient": match o.kind.as_str() {
            "consent_cmp" => "a consent decision needs the banner's container and the decline control named exactly, and its polarity checked: counting clicks cannot tell a decline from an accept",
            "login_wall" => "a sign-in wall is recognised by what it says and where it appears; only the agent can tell which parts are stable and that nothing secret is stored",
            _ => "the selector that worked depends on the page's layout; only the agent can name a stable one",
        },
        "resolutionTools": ["nova.pks_upsert", "nova.learn_resolve_opportunity"],
        "evidenceJson": o.evidence.to_string(), "skeleton": o.skeleton,
        "eligibleCalls": o.eligible_calls,
    })
}

fn covers(o: &Opportunity, phenomenon: &Value) -> bool {
    let kind = phenomenon["type"].as_str().unwrap_or_default();
    match o.kind.as_str() {
        "risky_repeat" => true,
        k => k == kind,
    }
}

impl Semantic<'_> {
    /// After a call ran: resolves what a matching upsert settles, counts the call against the
    /// site's open opportunities, raises new ones, and says what to add to the reply.
    pub fn after_call(
        &self,
        session: &Session,
        call: &Call,
        args: &Map<String, Value>,
        full: &Value,
    ) -> Map<String, Value> {
        let mut extra = Map::new();
        let origin = lcj::ingest::host_of(call);
        if origin.is_empty() || !(call.success || call.tool == "nova.navigate") {
            return extra;
        }
        let now = crate::clock::now_ms();
        let r = self.lcj.with(|c| {
            // Most calls find nothing open and nothing new: they read, and write nothing.
            let found = if RESOLVING.contains(&call.tool.as_str()) {
                Vec::new()
            } else {
                detect(session, call, full, &origin, c)?
            };
            let quiet = found.is_empty()
                && call.tool != "nova.pks_upsert"
                && call.tool != "nova.navigate"
                && opportunities::open_on(c, &origin)?.is_empty();
            if quiet {
                return Ok(Map::new());
            }
            let tx = crate::store::write_tx(c)?;
            let mut extra = Map::new();
            if call.tool == "nova.pks_upsert" {
                let phenomenon = args.get("phenomenon").cloned().unwrap_or(Value::Null);
                if let Some(o) = opportunities::open_on(&tx, &origin)?.into_iter().find(|o| covers(o, &phenomenon)) {
                    opportunities::resolve(&tx, &o.id, "upsert", Some("a matching entry was stored"), "pks_upsert", now)?;
                    extra.insert(
                        "pksSemanticLearningResolution".into(),
                        json!({"status": "resolved", "opportunityId": o.id, "verdict": "upsert",
                               "reason": "a matching entry was stored", "matchSource": "pks_upsert"}),
                    );
                }
            }
            if !RESOLVING.contains(&call.tool.as_str()) {
                opportunities::escalate(&tx, &origin, now)?;
                for o in &found {
                    opportunities::raise(&tx, o, &call.owner, now)?;
                }
                let open = opportunities::open_on(&tx, &origin)?;
                let rank = |s: &str| match s {
                    "strict" => 2,
                    "warned" => 1,
                    _ => 0,
                };
                if let Some(o) = open.iter().max_by_key(|o| (rank(&o.state), -o.eligible_calls)) {
                    extra.insert("pksSemanticLearning".into(), prompt(o));
                }
            }
            // Leaving a site with opportunities open: say so once.
            if call.tool == "nova.navigate" {
                let left = call
                    .url_before
                    .as_deref()
                    .and_then(|u| crate::pks::scope::normalize(u).ok())
                    .filter(|site| *site != origin);
                if let Some(site) = left {
                    let listed = opportunities::summarize(&tx, &site, now)?;
                    if !listed.is_empty() {
                        extra.insert(
                            "pksSemanticLearningBatchSummary".into(),
                            json!({"status": "batch_summary", "origin": site,
                                   "reason": format!("{} learning opportunit{} on {site} stayed unresolved when the agent left it",
                                                     listed.len(), if listed.len() == 1 { "y" } else { "ies" }),
                                   "entries": listed.iter().map(|o| json!({"opportunityId": o.id, "kind": o.kind,
                                       "status": o.state, "reason": o.reason, "confidence": o.confidence})).collect::<Vec<_>>()}),
                        );
                    }
                }
            }
            tx.commit()?;
            Ok(extra)
        });
        match r {
            Ok(e) => extra = e,
            Err(e) => tracing::warn!(error = %e, "semantic learning skipped a call"),
        }
        extra
    }
}
