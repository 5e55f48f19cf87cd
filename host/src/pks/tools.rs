//! The PKS store tools: `nova.pks_upsert`, `nova.pks_get`, `nova.pks_list`,
//! `nova.pks_deprecate` (docs/pks.md is their reference). Writes are accepted only for a site
//! open in a tab, so knowledge is written by someone looking at the site.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::model::{Auth, Device, Phenomenon};
use super::records::{self, Entry};
use super::summary::{Detail, describe};
use super::{MAX_PER_DOMAIN, Pks, fragile, poison, scope, siblings};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// How much a site is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trust {
    /// Not known (the default).
    Unknown,
    /// Low.
    Low,
    /// Medium.
    Medium,
    /// High.
    High,
}

impl Trust {
    fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
        }
    }
}

/// What is known of the site as a whole.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema, serde::Serialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DomainContext {
    /// Device class the knowledge was gathered on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<Device>,
    /// Locale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub locale: Option<String>,
    /// Sign-in state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<Auth>,
    /// What the site can do (free-form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain_capabilities: Option<Value>,
    /// How the site's state is told (free-form).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trusted_state_detectors: Option<Value>,
    /// What kind of service it is (`news`, `shop`, `chat`, ...): `nova.pks_list` filters on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classification: Option<String>,
}

/// Arguments of `nova.pks_upsert`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct UpsertArgs {
    /// The site: a host (`example.org`) or a URL on it.
    pub scope: String,
    /// What is known of the site as a whole.
    #[serde(default)]
    pub context: Option<DomainContext>,
    /// How much the site is trusted.
    #[serde(default)]
    pub trust: Option<Trust>,
    /// The phenomenon: `id`, `type`, `fingerprint`, `playbook`, `context`.
    pub phenomenon: Phenomenon,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Arguments of `nova.pks_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GetArgs {
    /// The site.
    pub scope: String,
    /// One phenomenon (its id, any case).
    #[serde(default)]
    pub phenomenon_id: Option<String>,
    /// `full` (default) or `summary`.
    #[serde(default)]
    pub output_detail: Detail,
    /// The context the knowledge is wanted for; entries that do not fit are named in `mismatches`.
    #[serde(default)]
    pub context: Option<MatchContext>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Arguments of `nova.pks_list`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListArgs {
    /// Only sites whose `context.classification` is this.
    #[serde(default)]
    pub service_category: Option<String>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// Arguments of `nova.pks_deprecate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeprecateArgs {
    /// The site.
    pub scope: String,
    /// The phenomenon.
    pub phenomenon_id: String,
    /// Why it no longer holds (1 to 500 characters).
    pub reason: String,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What is on the page now, for `nova.pks_match`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Observation {
    /// The signals seen (1 to 256).
    pub signals: Vec<super::model::Signal>,
    /// Only phenomena of this type.
    #[serde(default, rename = "type")]
    pub kind: Option<super::model::Kind>,
}

/// The context a match is asked for.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchContext {
    /// Device class.
    #[serde(default)]
    pub device: Option<Device>,
    /// Locale.
    #[serde(default)]
    pub locale: Option<String>,
    /// Sign-in state.
    #[serde(default)]
    pub auth: Option<Auth>,
    /// The page's path (`/feed/123`).
    #[serde(default)]
    pub route: Option<String>,
}

/// Arguments of `nova.pks_match`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct MatchArgs {
    /// The site.
    pub scope: String,
    /// What is on the page now.
    pub observation: Observation,
    /// How many matches to return (1 to 10, default 1).
    #[serde(default = "one")]
    pub top_k: u32,
    /// The context; an entry whose context does not fit is left out (and said why).
    #[serde(default)]
    pub context: Option<MatchContext>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn one() -> u32 {
    1
}

impl MatchContext {
    /// The context as matching compares it.
    pub fn asked(&self) -> super::matching::Asked {
        let word = |v: Option<Value>| v.and_then(|v| v.as_str().map(str::to_owned));
        super::matching::Asked {
            device: word(self.device.and_then(|d| serde_json::to_value(d).ok())),
            locale: self.locale.clone(),
            auth: word(self.auth.and_then(|d| serde_json::to_value(d).ok())),
            route: self.route.clone(),
        }
    }
}

/// `nova.pks_match.topK` bounds and default.
pub const TOP_K: (u32, u32, u32) = (1, 10, 1);
/// Most signals in an observation.
pub const MAX_OBSERVED_SIGNALS: usize = 256;

/// A site's record, its entries, and each entry's 30-day success rate and attempts.
type Loaded = (Option<records::Domain>, Vec<Entry>, Vec<(Option<f64>, i64)>);

/// What the PKS tools reach.
pub struct PksTools<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
    /// The browser's tabs (a write needs its site open in one).
    pub bridge: &'h crate::bridge::Bridge,
    /// The data dir (the sibling policy is a setting).
    pub data: &'h crate::paths::DataDir,
}

impl<'h> From<&'h crate::hub::Hub> for PksTools<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, bridge: &hub.bridge, data: &hub.data }
    }
}

crate::tool! {
    /// `nova.pks_upsert` in the tool registry.
    pub static PKS_UPSERT = ToolDef::new(
        "nova.pks_upsert",
        "Store how to handle a recurring situation on a site (a consent banner, a sign-in wall, a \
         modal): its fingerprint and a playbook. Every action declares its polarity; broad \
         selectors, labels that contradict the polarity and unknown vendor calls are refused. The \
         site must be open in a tab. New entries start in shadow (L1).",
        registry::schema::<UpsertArgs>,
        crate::handler!(PksTools::pks_upsert),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

crate::tool! {
    /// `nova.pks_get` in the tool registry.
    pub static PKS_GET = ToolDef::new(
        "nova.pks_get",
        "What Nova knows of how to operate a site: its active phenomena with their health, or one \
         phenomenon in full.",
        registry::schema::<GetArgs>,
        crate::handler!(PksTools::pks_get),
    )
    .bundles(&[Bundle::PksLearning, Bundle::BrowserAutomation])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

crate::tool! {
    /// `nova.pks_match` in the tool registry.
    pub static PKS_MATCH = ToolDef::new(
        "nova.pks_match",
        "Which of a site's active phenomena fit what is on the page now: the best match with its \
         playbook, ranked by how much of its fingerprint is seen, its health, the site's trust and \
         how specific its context is; near misses say what was missing.",
        registry::schema::<MatchArgs>,
        crate::handler!(PksTools::pks_match),
    )
    .bundles(&[Bundle::PksLearning, Bundle::BrowserAutomation])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

crate::tool! {
    /// `nova.pks_list` in the tool registry.
    pub static PKS_LIST = ToolDef::new(
        "nova.pks_list",
        "The sites Nova holds knowledge for, with how many phenomena each and how many are active.",
        registry::schema::<ListArgs>,
        crate::handler!(PksTools::pks_list),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

crate::tool! {
    /// `nova.pks_deprecate` in the tool registry.
    pub static PKS_DEPRECATE = ToolDef::new(
        "nova.pks_deprecate",
        "Retire a phenomenon that no longer holds on a site (kept, never matched or applied).",
        registry::schema::<DeprecateArgs>,
        crate::handler!(PksTools::pks_deprecate),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

/// The id an agent may give a phenomenon.
fn check_id(id: &str) -> Result<(), CallError> {
    let ok = (1..=128).contains(&id.chars().count())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    if ok {
        return Ok(());
    }
    Err(CallError::invalid(
        "phenomenon.id",
        "`phenomenon.id` must be 1 to 128 letters, digits, `_`, `-`, `.` or `:`",
    ))
}

impl PksTools<'_> {
    /// A site's record, its entries and their 30-day success rates.
    fn load(&self, scope: &str, now: i64) -> Result<Loaded, CallError> {
        self.pks.with(|c| {
            let domain = records::domain(c, scope)?;
            let entries = records::entries(c, scope)?;
            let rates = entries
                .iter()
                .map(|e| records::success_rate(c, scope, &e.id, now))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            Ok((domain, entries, rates))
        })
    }

    /// `nova.pks_upsert`.
    pub async fn pks_upsert(&self, rec: &mut CallRecord, a: UpsertArgs) -> Result<ToolReply, CallError> {
        let scope = scope::normalize(&a.scope)?;
        if let Some(id) = &a.phenomenon.id {
            check_id(id)?;
        }
        poison::check(&a.phenomenon)?;
        if !scope::open_in_a_tab(self.bridge, &scope) {
            return Ok(scope::not_open(&scope));
        }
        let id = a.phenomenon.id.clone().unwrap_or_else(|| records::stable_id(&a.phenomenon));
        let now = crate::time::now_ms();
        let context = a.context.as_ref().map(|c| serde_json::to_value(c).unwrap_or(Value::Null));
        let policy = crate::settings::Settings::load(self.data).pks_sibling_policy;
        let inherited = self.pks.with(|c| {
            Ok(records::entry(c, &scope, &id)?
                .is_none()
                .then(|| siblings::find(c, &scope, &id, policy))
                .transpose()?
                .flatten())
        })?;
        if let Some(i) = inherited {
            // One id, one entry per site family: a local copy would split its evidence.
            return Ok(ToolReply::ok(json!({
                "ok": false, "status": "rejected", "reasonCode": "pks.inherited_scope", "retryable": false,
                "scope": scope, "phenomenonId": id, "inheritedFrom": i.source,
                "message": format!("{scope} uses `{id}` from its sibling {}: change it there (nova.pks_patch), or store \
                                    this site's own entry under another id", i.source),
            })));
        }
        let done = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let exists = records::entry(&tx, &scope, &id)?.is_some();
            let count = records::entries(&tx, &scope)?.len();
            if !exists && count >= MAX_PER_DOMAIN {
                return Ok(None);
            }
            records::touch_domain(&tx, &scope, a.trust.map(Trust::as_str), context.as_ref(), now)?;
            let done = records::upsert(&tx, &scope, &id, &a.phenomenon, ("L1", "manual"), now)?;
            tx.commit()?;
            Ok(Some(done))
        })?;
        let Some(done) = done else {
            return Err(CallError::invalid(
                "phenomenon",
                format!(
                    "pks.domain_full: {scope} already holds {MAX_PER_DOMAIN} phenomena; deprecate or update one \
                     instead of adding another"
                ),
            ));
        };
        rec.executed();
        let fragile: Vec<Value> = a
            .phenomenon
            .playbook
            .actions
            .iter()
            .flat_map(|x| x.selector.iter().chain(&x.fallback_selectors))
            .filter_map(|s| fragile::why(s).map(|why| json!({"selector": s, "why": why})))
            .collect();
        let mut reply = json!({
            "ok": true, "status": "ok", "action": done.as_str(), "scope": scope, "phenomenonId": id,
        });
        if !fragile.is_empty() {
            reply["selectorWarning"] = json!(fragile);
        }
        Ok(ToolReply::ok(reply))
    }

    /// `nova.pks_get`.
    pub async fn pks_get(&self, rec: &mut CallRecord, a: GetArgs) -> Result<ToolReply, CallError> {
        let scope = scope::normalize(&a.scope)?;
        if a.context.as_ref().and_then(|c| c.locale.as_deref()).is_some_and(str::is_empty) {
            return Err(CallError::invalid(
                "context.locale",
                "`context.locale` must be at least 1 character",
            ));
        }
        let now = crate::time::now_ms();
        let (domain, entries, rates) = self.load(&scope, now)?;
        let hints = self.pks.with(|c| records::hints(c, &scope))?;
        let policy = crate::settings::Settings::load(self.data).pks_sibling_policy;
        let inherited: Vec<Value> = self
            .pks
            .with(|c| siblings::inheritable(c, &scope, policy))?
            .iter()
            .map(|i| {
                json!({"phenomenonId": i.entry.id, "type": i.entry.kind, "from": i.source, "verified": i.verified(),
                       "suppressed": i.standing.suppressed, "failuresHere": i.standing.failures})
            })
            .collect();
        rec.executed();
        let Some(domain) = domain else {
            return Ok(ToolReply::ok(
                json!({"ok": true, "status": "ok", "found": false, "scope": scope, "inherited": inherited}),
            ));
        };
        let asked = a.context.unwrap_or_default().asked();
        let mismatches: Vec<Value> = entries
            .iter()
            .filter_map(|e| {
                let context: super::model::Context =
                    serde_json::from_value(e.context.clone()).unwrap_or_default();
                super::matching::context_fit(&context, &asked)
                    .err()
                    .map(|why| json!({"phenomenonId": e.id, "why": why}))
            })
            .collect();
        let mut body = json!({
            "ok": true, "status": "ok", "found": true, "scope": scope, "trust": domain.trust,
            "contentRev": domain.content_rev, "updatedAtUtc": crate::time::iso(domain.updated_at),
            "contextMatch": mismatches.is_empty(), "mismatches": mismatches,
            "phenomenonCount": entries.iter().filter(|e| e.active()).count(),
            "activePhenomenonCount": entries.iter().filter(|e| e.active()).count(),
            "totalPhenomenaCount": entries.len(),
            "deprecatedCount": entries.iter().filter(|e| e.deprecated.is_some()).count(),
            "domainHintCount": hints.len(),
            "inherited": inherited,
            "hints": hints.iter().map(|(key, kind, text, routes)| json!({"key": key, "kind": kind, "text": text, "routes": routes})).collect::<Vec<_>>(),
        });
        if let Some(want) = &a.phenomenon_id {
            match entries.iter().zip(&rates).find(|(e, _)| e.id.eq_ignore_ascii_case(want)) {
                Some((e, rate)) => {
                    body["phenomenonFound"] = json!(true);
                    body["phenomenon"] = describe(e, *rate, Detail::Full);
                }
                None => {
                    body["phenomenonFound"] = json!(false);
                    body["availableIds"] = json!(entries.iter().map(|e| &e.id).collect::<Vec<_>>());
                }
            }
            return Ok(ToolReply::ok(body));
        }
        body["phenomena"] = json!(
            entries
                .iter()
                .zip(&rates)
                .filter(|(e, _)| e.active())
                .map(|(e, rate)| describe(e, *rate, a.output_detail))
                .collect::<Vec<_>>()
        );
        Ok(ToolReply::ok(body))
    }

    /// `nova.pks_match`.
    pub async fn pks_match(&self, rec: &mut CallRecord, a: MatchArgs) -> Result<ToolReply, CallError> {
        use super::matching;
        let scope = scope::normalize(&a.scope)?;
        crate::call::check_range("topK", a.top_k, TOP_K)?;
        let n = a.observation.signals.len();
        if n == 0 || n > MAX_OBSERVED_SIGNALS {
            return Err(CallError::invalid(
                "observation.signals",
                format!("`observation.signals` holds 1 to {MAX_OBSERVED_SIGNALS} signals, got {n}"),
            ));
        }
        let asked = a.context.unwrap_or_default().asked();
        let now = crate::time::now_ms();
        let (domain, entries, rates) = self.load(&scope, now)?;
        rec.executed();
        let trust = matching::trust_value(domain.as_ref().map_or("unknown", |d| d.trust.as_str()));
        let kind = a.observation.kind.map(super::model::Kind::as_str);
        // A sibling site's active entries count too, unless suppressed here (docs/pks.md,
        // "Sibling sites").
        let policy = crate::settings::Settings::load(self.data).pks_sibling_policy;
        let inherited = self.pks.with(|c| {
            siblings::inheritable(c, &scope, policy)?
                .into_iter()
                .filter(|i| !i.standing.suppressed)
                .map(|i| Ok((records::success_rate(c, &i.source, &i.entry.id, now)?, i)))
                .collect::<rusqlite::Result<Vec<_>>>()
        })?;
        let candidates: Vec<(&Entry, Option<f64>, Option<&str>)> = entries
            .iter()
            .zip(&rates)
            .map(|(e, (rate, _))| (e, *rate, None))
            .chain(inherited.iter().map(|((rate, _), i)| (&i.entry, *rate, Some(i.source.as_str()))))
            .collect();
        let (mut hits, mut misses) = (Vec::new(), Vec::new());
        for (e, rate, from) in candidates {
            if !e.active() || kind.is_some_and(|k| k != e.kind) {
                continue;
            }
            let Ok(fp) = serde_json::from_value::<super::model::Fingerprint>(e.fingerprint.clone()) else {
                continue;
            };
            let context: super::model::Context =
                serde_json::from_value(e.context.clone()).unwrap_or_default();
            let (conf, matched, missing) = matching::confidence(&fp, &a.observation.signals);
            let fit = matching::context_fit(&context, &asked);
            let miss = |why: String| {
                json!({"phenomenonId": e.id, "confidence": conf, "minConfidence": fp.min_confidence,
                       "missingSignals": missing, "why": why})
            };
            match fit {
                Err(why) => misses.push(miss(why)),
                Ok(_) if conf + 1e-9 < fp.min_confidence => {
                    misses.push(miss(format!(
                        "{:.2} of the fingerprint seen, below {:.2}",
                        conf, fp.min_confidence
                    )));
                }
                Ok(specificity) => {
                    let health = matching::health(rate, e.attempts.3, e.last.1, now);
                    let score = matching::score(conf, health, trust, specificity);
                    hits.push((score, conf, e, matched.len(), fp.signals.len(), from));
                }
            }
        }
        hits.sort_by(|x, y| y.0.total_cmp(&x.0).then_with(|| x.2.id.cmp(&y.2.id)));
        let best = hits.first().map(|(score, conf, e, _, _, from)| {
            json!({"phenomenonId": e.id, "type": e.kind, "confidence": conf, "score": score,
                   "learningLevel": e.level, "playbook": e.playbook, "inheritedFrom": from})
        });
        let matches: Vec<Value> = hits
            .iter()
            .take(a.top_k as usize)
            .map(|(score, conf, e, seen, total, from)| {
                json!({"phenomenonId": e.id, "confidence": conf, "score": score, "matchedSignals": seen,
                       "totalSignals": total, "inheritedFrom": from})
            })
            .collect();
        // Nothing stored fits: the consent platforms Nova knows, when the observation names one.
        let templates: Vec<Value> = if best.is_some() || kind.is_some_and(|k| k != "consent_cmp") {
            Vec::new()
        } else {
            super::platforms::ALL
                .iter()
                .filter_map(|p| {
                    let t = p.template();
                    let (conf, matched, _) = matching::confidence(&t.fingerprint, &a.observation.signals);
                    (conf + 1e-9 >= t.fingerprint.min_confidence).then(|| {
                        json!({"platform": p.key, "phenomenonId": p.phenomenon_id(), "type": "consent_cmp",
                               "confidence": conf, "matchedSignals": matched.len(),
                               "totalSignals": t.fingerprint.signals.len(), "playbook": t.playbook,
                               "source": "platform_template"})
                    })
                })
                .collect()
        };
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "matched": best.is_some(), "scope": scope, "bestMatch": best,
            "matches": matches, "nearMisses": misses, "templateMatches": templates,
            "hint": (!templates.is_empty()).then_some(
                "No stored entry fits, but a consent platform Nova knows does: nova.pks_platform_seed \
                 stores it for this site as a candidate."),
        })))
    }

    /// `nova.pks_list`.
    pub async fn pks_list(&self, rec: &mut CallRecord, a: ListArgs) -> Result<ToolReply, CallError> {
        let rows = self.pks.with(|c| {
            let mut out = Vec::new();
            for d in records::domains(c)? {
                let class = d.context.get("classification").and_then(Value::as_str).map(str::to_owned);
                if a.service_category.as_deref().is_some_and(|want| class.as_deref() != Some(want)) {
                    continue;
                }
                let entries = records::entries(c, &d.scope)?;
                out.push(json!({
                    "scope": d.scope, "trust": d.trust, "serviceCategory": class, "contentRev": d.content_rev,
                    "updatedAtUtc": crate::time::iso(d.updated_at), "totalPhenomenaCount": entries.len(),
                    "activePhenomenonCount": entries.iter().filter(|e| e.active()).count(),
                }));
            }
            Ok(out)
        })?;
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "count": rows.len(), "serviceCategory": a.service_category, "domains": rows,
        })))
    }

    /// `nova.pks_deprecate`.
    pub async fn pks_deprecate(
        &self,
        rec: &mut CallRecord,
        a: DeprecateArgs,
    ) -> Result<ToolReply, CallError> {
        let scope = scope::normalize(&a.scope)?;
        let n = a.reason.trim().chars().count();
        if !(1..=500).contains(&n) {
            return Err(CallError::invalid(
                "reason",
                format!("`reason` must be 1 to 500 characters, got {n}"),
            ));
        }
        if !scope::open_in_a_tab(self.bridge, &scope) {
            return Ok(scope::not_open(&scope));
        }
        let now = crate::time::now_ms();
        let done =
            self.pks.with(|c| records::deprecate(c, &scope, &a.phenomenon_id, a.reason.trim(), now))?;
        rec.executed();
        if !done {
            return Ok(ToolReply::ok(json!({
                "ok": false, "status": "not_found", "reasonCode": "pks.phenomenon_not_found", "retryable": false,
                "scope": scope, "phenomenonId": a.phenomenon_id,
            })));
        }
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "scope": scope, "phenomenonId": a.phenomenon_id, "deprecated": true,
            "deprecatedReason": a.reason.trim(),
        })))
    }
}
