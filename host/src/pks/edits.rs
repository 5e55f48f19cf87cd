//! The PKS writes besides a whole upsert (docs/pks.md, "Patching", "Hints"): `nova.pks_patch`
//! changes part of a stored phenomenon (a JSON merge patch, checked by the same rules as an
//! upsert), `nova.pks_upsert_hint` notes how a site behaves where no playbook applies. Both only
//! for a site open in a tab.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::model::Phenomenon;
use super::records::{self, Upserted};
use super::{Pks, fragile, poison, scope};
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// Hints one site may hold.
pub const MAX_HINTS: usize = 50;
/// Longest hint text, characters.
pub const MAX_HINT_CHARS: usize = 500;

/// `nova.pks_patch` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PatchArgs {
    /// The site.
    pub scope: String,
    /// The phenomenon (case-insensitive).
    pub phenomenon_id: String,
    /// What changes, as a JSON merge patch over `{type, fingerprint, playbook, context}`: objects
    /// merge, arrays and values replace, `null` removes.
    pub patch: Map<String, Value>,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// A hint's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HintKind {
    /// Where things are (`sign-in lives at /account/login`).
    Navigation,
    /// How long things take.
    Timing,
    /// How signing in works.
    Auth,
    /// How the page is laid out.
    Layout,
    /// How the site reacts.
    Behavior,
    /// Anything else.
    Note,
}

/// A hint.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Hint {
    /// Its key (1-64 letters, digits, `_-.:`; default: derived from kind and text).
    #[serde(default)]
    pub key: Option<String>,
    /// `navigation`, `timing`, `auth`, `layout`, `behavior`, `note`.
    pub kind: HintKind,
    /// What to know (1-500 characters; never a secret).
    pub text: String,
    /// Where it holds (as phenomenon routes; absent: everywhere).
    #[serde(default)]
    pub routes: Option<Vec<String>>,
}

/// `nova.pks_upsert_hint` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct HintArgs {
    /// The site.
    pub scope: String,
    /// The hint.
    pub hint: Hint,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What the PKS edits reach.
pub struct PksEdits<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
    /// The browser's tabs (a write needs its site open in one).
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for PksEdits<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, bridge: &hub.bridge }
    }
}

crate::tool! {
    /// `nova.pks_patch` in the tool registry.
    pub static PKS_PATCH = ToolDef::new(
        "nova.pks_patch",
        "Change part of a stored phenomenon (a JSON merge patch over type, fingerprint, playbook and \
         context), checked by the same rules as nova.pks_upsert; its learning level and drift \
         baseline stay. The site must be open in a tab.",
        registry::schema::<PatchArgs>,
        crate::handler!(PksEdits::pks_patch),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

crate::tool! {
    /// `nova.pks_upsert_hint` in the tool registry.
    pub static PKS_UPSERT_HINT = ToolDef::new(
        "nova.pks_upsert_hint",
        "Note how a site behaves where no playbook applies (navigation, timing, auth, layout, \
         behavior, note; at most 500 characters, never a secret). Hints are shown with the site's \
         knowledge and never executed. The site must be open in a tab.",
        registry::schema::<HintArgs>,
        crate::handler!(PksEdits::pks_upsert_hint),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::None);
}

/// RFC 7386 merge patch of `patch` into `target`.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(t) = target {
        for (k, v) in p {
            if v.is_null() {
                t.remove(k);
            } else {
                merge(t.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

fn check_key(key: &str) -> Result<(), CallError> {
    let ok = (1..=64).contains(&key.chars().count())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'));
    if ok {
        return Ok(());
    }
    Err(CallError::invalid("hint.key", "`hint.key` must be 1 to 64 letters, digits, `_`, `-`, `.` or `:`"))
}

impl PksEdits<'_> {
    /// `nova.pks_patch`.
    pub async fn pks_patch(&self, rec: &mut CallRecord, a: PatchArgs) -> Result<ToolReply, CallError> {
        let site = scope::normalize(&a.scope)?;
        const FIELDS: [&str; 4] = ["type", "fingerprint", "playbook", "context"];
        if a.patch.is_empty() {
            return Err(CallError::invalid(
                "patch",
                "`patch` changes nothing: name type, fingerprint, playbook or context",
            ));
        }
        if let Some(k) = a.patch.keys().find(|k| !FIELDS.contains(&k.as_str())) {
            let why = if k == "id" {
                "the id of a phenomenon cannot change".to_owned()
            } else {
                format!("`{k}` is not a field of a phenomenon")
            };
            return Err(CallError::invalid(
                &format!("patch.{k}"),
                format!("`patch.{k}`: {why}; patchable: {}", FIELDS.join(", ")),
            ));
        }
        if !scope::open_in_a_tab(self.bridge, &site) {
            return Ok(scope::not_open(&site));
        }
        let Some(e) = self.pks.with(|c| records::entry(c, &site, &a.phenomenon_id))? else {
            return Ok(ToolReply::ok(json!({
                "ok": false, "status": "not_found", "reasonCode": "pks.phenomenon_not_found", "scope": site,
                "phenomenonId": a.phenomenon_id, "message": format!("{site} has no phenomenon `{}`", a.phenomenon_id),
            })));
        };
        let mut doc = json!({"id": e.id, "type": e.kind, "fingerprint": e.fingerprint, "playbook": e.playbook,
                             "context": e.context});
        let before = doc.clone();
        merge(&mut doc, &Value::Object(a.patch.clone()));
        let patched: Phenomenon = serde_path_to_error::deserialize(doc.clone()).map_err(|err| {
            let path = err.path().to_string();
            CallError::invalid(
                &format!("patch.{path}"),
                format!("`patch.{path}` makes the phenomenon invalid: {}", err.inner()),
            )
        })?;
        poison::check(&patched)?;
        let changed: Vec<&str> = FIELDS.iter().copied().filter(|f| before[f] != doc[f]).collect();
        let now = crate::time::now_ms();
        let (done, rev) = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let done = records::upsert(&tx, &site, &e.id, &patched, (&e.level, &e.origin), now)?;
            let rev = records::domain(&tx, &site)?.map(|d| d.content_rev);
            tx.commit()?;
            Ok((done, rev))
        })?;
        rec.executed();
        let warnings: Vec<String> = patched
            .playbook
            .actions
            .iter()
            .flat_map(|x| x.selector.iter().chain(&x.fallback_selectors))
            .filter_map(|s| fragile::why(s).map(|w| format!("{s}: {w}")))
            .collect();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok",
            "action": if done == Upserted::Reactivated { "reactivated" } else { "patched" },
            "scope": site, "phenomenonId": e.id, "changed": changed, "learningLevel": e.level, "contentRev": rev,
            "selectorWarning": (!warnings.is_empty()).then(|| warnings.join("; ")),
        })))
    }

    /// `nova.pks_upsert_hint`.
    pub async fn pks_upsert_hint(&self, rec: &mut CallRecord, a: HintArgs) -> Result<ToolReply, CallError> {
        let site = scope::normalize(&a.scope)?;
        let text = a.hint.text.trim().to_owned();
        let n = text.chars().count();
        if n == 0 || n > MAX_HINT_CHARS {
            return Err(CallError::invalid(
                "hint.text",
                format!("`hint.text` must be 1 to {MAX_HINT_CHARS} characters, got {n}"),
            ));
        }
        if let Some(why) = crate::ok::secret::why("hint.text", &json!(text), None) {
            return Err(CallError::invalid(
                "hint.text",
                format!("`hint.text` is refused: {why}; secrets are never stored"),
            ));
        }
        if let Some(k) = &a.hint.key {
            check_key(k)?;
        }
        let kind = serde_json::to_value(a.hint.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        let key = a.hint.key.clone().unwrap_or_else(|| {
            let digest = Sha256::digest(format!("{kind}\n{text}").as_bytes());
            format!("{kind}_{}", digest.iter().take(4).map(|b| format!("{b:02x}")).collect::<String>())
        });
        if !scope::open_in_a_tab(self.bridge, &site) {
            return Ok(scope::not_open(&site));
        }
        let routes = a.hint.routes.as_ref().map(|r| json!(r));
        let now = crate::time::now_ms();
        let done = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let held = records::hints(&tx, &site)?;
            let known = held.iter().any(|h| h.0 == key);
            if !known && held.len() >= MAX_HINTS {
                return Ok(None);
            }
            let created = records::upsert_hint(
                &tx,
                &site,
                &(key.clone(), kind.clone(), text.clone(), routes.clone()),
                now,
            )?;
            let count = records::hints(&tx, &site)?.len();
            tx.commit()?;
            Ok(Some((created, count)))
        })?;
        let Some((created, count)) = done else {
            return Err(CallError::invalid(
                "hint",
                format!("{site} holds {MAX_HINTS} hints, the most a site may; rewrite one by its key"),
            ));
        };
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "action": if created { "created" } else { "updated" }, "scope": site,
            "hintKey": key, "kind": kind, "domainHintCount": count,
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut doc = json!({"a": "b", "c": {"d": "e", "f": "g"}, "l": [1, 2]});
        merge(&mut doc, &json!({"a": "z", "c": {"f": null}, "l": [3]}));
        assert_eq!(doc, json!({"a": "z", "c": {"d": "e"}, "l": [3]}));
        let mut doc = json!({"a": 1});
        merge(&mut doc, &json!({"b": {"c": 2}}));
        assert_eq!(doc, json!({"a": 1, "b": {"c": 2}}));
    }
}
