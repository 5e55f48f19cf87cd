//! The OK tool `nova.ok_signal_schema`: the signal keys an agent can report with
//! `nova.ok_observe`, what each means and which values it takes: the 15 core signals of the
//! vocabulary ([`super::signals`]), then the custom keys agents have reported into this store
//! (docs/ok.md, "`nova.ok_signal_schema`").

use rusqlite::params;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::Knowledge;
use super::signals::{self, Home, Signal, ValueType};
use crate::call::{CallError, CallRecord, ToolReply, check_chars, check_range};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

/// `maxEntries` bounds and default.
pub const MAX_ENTRIES: (u32, u32, u32) = (1, 500, 100);

/// Arguments of `nova.ok_signal_schema`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchemaArgs {
    /// Only the keys of this namespace (`core`, `acme`); all when absent or null.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Also list deprecated keys (default false).
    #[serde(default)]
    pub include_deprecated: bool,
    /// Most keys listed (1 to 500, default 100); `truncated` says when more matched.
    #[serde(default = "max_entries")]
    pub max_entries: u32,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

fn max_entries() -> u32 {
    MAX_ENTRIES.2
}

/// What `nova.ok_signal_schema` reaches.
pub struct SignalSchema<'h> {
    /// OK's tables (the custom keys reported).
    pub ok: &'h Knowledge,
}

impl<'h> From<&'h crate::hub::Hub> for SignalSchema<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { ok: &hub.ok }
    }
}

crate::tool! {
    /// `nova.ok_signal_schema` in the tool registry.
    pub static OK_SIGNAL_SCHEMA = ToolDef::new(
        "nova.ok_signal_schema",
        "The signal keys nova.ok_observe takes: the 15 core signals with their values, scope, \
         meaning and an example, then the custom keys agents have reported here. Filter by \
         namespace.",
        registry::schema::<SchemaArgs>,
        crate::handler!(SignalSchema::ok_signal_schema),
    )
    .bundles(&[Bundle::PageReadDebug])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

/// A custom key agents reported: how many facts hold it now and when it was last seen.
struct Reported {
    key: String,
    current: i64,
    last_observed_ms: i64,
}

impl SignalSchema<'_> {
    /// `nova.ok_signal_schema`.
    pub async fn ok_signal_schema(
        &self,
        rec: &mut CallRecord,
        a: SchemaArgs,
    ) -> Result<ToolReply, CallError> {
        check_range("maxEntries", a.max_entries, MAX_ENTRIES)?;
        let namespace = a.namespace.as_deref();
        if let Some(n) = namespace {
            check_namespace(n)?;
        }
        let limit = a.max_entries as usize;
        let mut keys: Vec<Value> = signals::core_signals()
            .filter(|_| namespace.is_none_or(|n| n == "core"))
            .map(|(path, s)| entry(&format!("core.{path}"), s, s.description, "vocabulary"))
            .collect();
        if namespace != Some("core") {
            // One more than fits, to know whether the list was cut.
            let room = (limit + 1).saturating_sub(keys.len());
            for r in reported(self.ok, namespace, room)? {
                let description = format!(
                    "{} Reported by agents: {} current fact{}, last observed {}.",
                    signals::CUSTOM.description,
                    r.current,
                    if r.current == 1 { "" } else { "s" },
                    crate::time::iso(r.last_observed_ms)
                );
                keys.push(entry(&r.key, signals::CUSTOM, &description, "reported"));
            }
        }
        let truncated = keys.len() > limit;
        keys.truncate(limit);
        rec.executed();
        Ok(ToolReply::ok(json!({
            "ok": true, "status": "ok", "namespaceFilter": namespace,
            "includeDeprecated": a.include_deprecated, "maxEntries": a.max_entries,
            "count": keys.len(), "truncated": truncated, "keys": keys,
        })))
    }
}

/// A namespace is the first segment of a signal key, at most 128 characters.
fn check_namespace(n: &str) -> Result<(), CallError> {
    check_chars("namespace", n, signals::MAX_KEY_CHARS)?;
    if signals::is_namespace(n) {
        return Ok(());
    }
    Err(CallError::invalid(
        "namespace",
        format!(
            "`namespace` must be the first segment of a signal key: lower-case letters and digits, \
             starting with a letter (core, acme); got `{n}`"
        ),
    ))
}

/// One key as the reply lists it. Nothing is deprecated in the vocabulary yet, so every entry
/// says `deprecated: false` and `includeDeprecated` changes nothing.
fn entry(key: &str, s: Signal, description: &str, origin: &str) -> Value {
    let allowed = match s.value {
        ValueType::Text(values) if !values.is_empty() => json!(values),
        _ => Value::Null,
    };
    let scope = match s.home {
        Home::Binding => "tab",
        Home::Service => "service",
        Home::Account => "account",
    };
    json!({
        "signalKey": key,
        "namespace": key.split('.').next().unwrap_or_default(),
        "valueType": s.value.as_str(),
        "allowedValues": allowed,
        "scope": scope,
        "staleOnNewUrl": s.route,
        "description": description,
        "exampleJson": (!s.example.is_empty()).then_some(s.example),
        "deprecated": false,
        "origin": origin,
    })
}

/// The custom keys (any namespace but `core`) OK holds facts of, in `namespace` when given,
/// by key, at most `limit`. Their values are not shown: they are what one service showed.
fn reported(k: &Knowledge, namespace: Option<&str>, limit: usize) -> Result<Vec<Reported>, CallError> {
    k.with(|c| {
        let mut stmt = c.prepare(
            "SELECT fact_key, COALESCE(SUM(valid_to IS NULL), 0), MAX(last_observed_at) FROM ok_facts
              WHERE fact_key NOT LIKE 'core.%' AND (?1 IS NULL OR substr(fact_key, 1, length(?1) + 1) = ?1 || '.')
              GROUP BY fact_key ORDER BY fact_key LIMIT ?2",
        )?;
        stmt.query_map(params![namespace, i64::try_from(limit).unwrap_or(i64::MAX)], |r| {
            Ok(Reported { key: r.get(0)?, current: r.get(1)?, last_observed_ms: r.get(2)? })
        })?
        .collect()
    })
}
