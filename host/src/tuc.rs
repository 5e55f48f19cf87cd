//! TUC, task URL coverage (docs/tasks.md, "URL coverage (TUC)"): URL work units of an instance move
//! to `checked` only on server-trusted evidence, a registered coverage scan whose claims match what
//! Nova measured. Every relevant call is attributed to the calling agent's open instance on the
//! page's origin (`tuc_observations`); reconcile replays stored scans against open URL units.

pub mod args;
pub mod sources;
pub mod spell;

use nova_shared::protocol::{ScanParams, ScanResult, TabInfo, method, scan};
use rusqlite::{Connection, OptionalExtension as _, params};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::etm::instance::load_instance;
use crate::etm::soft;
use crate::observation::{ActionKind, flags};
use crate::registry::{self, Bundle, Evidence, PageUse, ToolDef};
use crate::settings::Settings;
use crate::time::now_ms;
use crate::time::parse_time;

/// What the URL-coverage tools and attribution reach.
pub struct Coverage<'h> {
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// Task memory.
    pub etm: &'h crate::etm::Etm,
    /// The data dir.
    pub data: &'h crate::paths::DataDir,
    /// Tab leases.
    pub leases: &'h crate::lease::Leases,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
    /// The observation recorder.
    pub recorder: &'h crate::tob::Recorder,
}

impl<'h> From<&'h crate::hub::Hub> for Coverage<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self {
            tabs: hub.tabs(),
            etm: &hub.etm,
            data: &hub.data,
            leases: &hub.leases,
            bridge: &hub.bridge,
            recorder: &hub.recorder,
        }
    }
}

/// Registered scans are hashed with the page code that runs them.
const SCAN_SOURCE: &str = include_str!("../../extension/src/scan.rs");
/// Required extracted/measured ratio for block-eligible evidence.
pub const MIN_TEXT_COVERAGE: f64 = 0.85;
/// Reconcile dry runs per instance and hour.
pub const RECONCILE_DRY_PER_HOUR: i64 = 3;
/// Reconcile apply runs per instance and hour.
pub const RECONCILE_APPLY_PER_HOUR: i64 = 1;
/// Text of a full-page scan returned to the agent at most (the rest stays in the page).
const MAX_RETURNED_TEXT: usize = 20_000;

/// Evidence class of an observation (docs/tasks.md, "Evidence classes"): (kind, score), from the
/// class the tool declares in the registry.
pub fn evidence_class(tool: &str, settings: &Settings) -> Option<(&'static str, f64)> {
    use Evidence;
    Some(match crate::registry::find(tool)?.evidence? {
        Evidence::Visit => ("visited", 1.0),
        Evidence::Screenshot if settings.task_url_coverage_screenshot_counts => ("visited", 1.0),
        Evidence::Screenshot => ("visual_snapshot", 2.0),
        Evidence::TextLight => ("text_extract_light", 3.0),
        Evidence::RegisteredScan => ("registered_scan", 7.0),
    })
}

/// `scopeOptions` of `nova.coverage_scan`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScopeOptions {
    /// Descend into open shadow roots (default true).
    #[serde(default)]
    pub include_shadow_dom: Option<bool>,
    /// Descend into same-origin iframes (default false).
    #[serde(default)]
    pub include_iframes: Option<bool>,
    /// Wait until the page is complete and quiet (default true).
    #[serde(default)]
    pub wait_for_hydration: Option<bool>,
    /// 0-30000, default 5000.
    #[serde(default)]
    #[schemars(range(min = 0, max = 30000))]
    pub hydration_timeout_ms: Option<u32>,
}

crate::tool_args! {
    /// `nova.coverage_scan`.
    #[derive(Debug, Clone, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct CoverageScanArgs [tab, agent] {
        /// nova_full_page_text_v1 | nova_structured_dom_v1 | nova_i18n_spellcheck_v1.
        pub scan_id: String,
        /// Scope options.
        #[serde(default)]
        pub scope_options: Option<ScopeOptions>,
    }
}

/// The trust checks on a scan result, in order (docs/tasks.md, "Trust checks").
pub fn trust(raw: &str, tab_url: &str, measured_chars: u64) -> (bool, &'static str, Value) {
    let Ok(parsed) = serde_json::from_str::<Value>(raw) else {
        return (false, "scan_result_not_json", Value::Null);
    };
    let empty = match &parsed {
        Value::Null => true,
        Value::Object(o) => o.is_empty(),
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    };
    if empty {
        return (false, "scan_returned_null_or_empty", parsed);
    }
    let claimed_url = parsed["effectiveUrl"].as_str().unwrap_or_default();
    if crate::url::normalize(claimed_url).is_none()
        || crate::url::normalize(claimed_url) != crate::url::normalize(tab_url)
    {
        return (false, "effective_url_mismatch", parsed);
    }
    let claimed = parsed["textChars"].as_u64().unwrap_or(0);
    if claimed > measured_chars.max(1) + 4 {
        return (false, "claimed_text_exceeds_measured", parsed);
    }
    (true, "server_registered_scan", parsed)
}

/// Kinds whose evidence must include every extraction channel.
fn strict_kind(kind: &str) -> bool {
    matches!(kind, "content_audit" | "compliance" | "legal" | "security_review" | "accessibility")
}

/// Block eligibility of a trusted scan (docs/tasks.md, "Block eligibility").
fn eligibility(
    trusted: bool,
    r: &ScanResult,
    extraction: &Value,
    ratio: f64,
    kind: &str,
) -> (bool, &'static str) {
    if !trusted {
        return (false, "not_trusted");
    }
    if !r.hydration_stable || r.document.ready_state != "complete" {
        return (false, "hydration_unstable");
    }
    if r.document.iframe_count > 0 && extraction["includedIframes"] != json!(true) {
        return (false, "iframes_present_but_not_included");
    }
    if ratio < MIN_TEXT_COVERAGE {
        return (false, "text_coverage_ratio_below_0_85");
    }
    if strict_kind(kind)
        && ["includedVisibleText", "includedAriaLabels", "includedInputs", "includedAltText"]
            .iter()
            .any(|k| extraction[*k] != json!(true))
    {
        return (false, "extraction_channels_incomplete");
    }
    (true, "ok")
}

/// One attribution to write.
pub struct Attribution<'a> {
    /// dispatch_seq.
    pub seq: i64,
    /// call id (the observation id).
    pub observation_id: &'a str,
    /// Agent.
    pub agent: &'a str,
    /// Tool.
    pub tool: &'a str,
    /// Effective URL.
    pub url: &'a str,
    /// Evidence kind and score.
    pub class: (&'static str, f64),
    /// Server trust.
    pub trusted: bool,
    /// Eligibility computed without an instance (None for non-scan tools).
    pub scan: Option<(&'a ScanResult, &'a Value, f64)>,
    /// The agent held the tab's lease when the call ran.
    pub leased: bool,
}

/// Writes the attribution row and, when exactly one instance is in scope and the evidence is
/// trusted and eligible, advances its unit `discovered -> checked`. Returns what happened.
pub fn attribute(c: &Connection, a: &Attribution<'_>) -> rusqlite::Result<Value> {
    let Some(norm) = crate::url::normalize(a.url) else { return Ok(json!({"skipReason": "not_http"})) };
    let origin = crate::url::origin(&norm).unwrap_or_default();
    let hash = crate::url::url_hash(&norm);
    let instances: Vec<(String, String)> = c
        .prepare_cached(
            "SELECT i.instance_id, i.effective_task_kind FROM task_instances i
             WHERE i.status IN ('pending', 'active') AND i.agent_id = ?1
               AND EXISTS (SELECT 1 FROM task_units u WHERE u.instance_id = i.instance_id AND u.url_normalized LIKE ?2 || '%')
             ORDER BY i.last_activity_at_ms DESC",
        )?
        .query_map(params![a.agent, origin], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let Some((instance, kind)) = instances.first() else {
        return Ok(json!({"skipReason": "no_active_instances"}));
    };
    let unit: Option<(String, String)> = c
        .query_row(
            "SELECT unit_key, status FROM task_units WHERE instance_id = ?1 AND url_hash = ?2",
            params![instance, hash],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (mut eligible, mut reason, ratio) = match a.scan {
        Some((r, extraction, ratio)) => {
            let (e, why) = eligibility(a.trusted, r, extraction, ratio, kind);
            (e, why, Some(ratio))
        }
        None => (false, "not_a_registered_scan", None),
    };
    if eligible && !a.leased {
        (eligible, reason) = (false, "no_tab_lease");
    }
    if instances.len() > 1 {
        (eligible, reason) = (false, "ambiguous_instance_match");
    } else if unit.is_none() {
        (eligible, reason) = (false, "extra_scope_url");
    }
    c.execute(
        "INSERT OR IGNORE INTO tuc_observations (observation_id, seq, instance_id, unit_key, tool_name, normalized_url,
            normalized_url_hash, top_level_origin, evidence_kind, evidence_score, evidence_trusted, eligible_for_coverage,
            eligibility_reason, text_coverage_ratio, normalizer_version, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
        params![
            a.observation_id,
            a.seq,
            instance,
            unit.as_ref().map(|u| u.0.clone()),
            a.tool,
            norm,
            hash,
            origin,
            a.class.0,
            a.class.1,
            a.trusted,
            eligible,
            reason,
            ratio,
            crate::url::NORMALIZER_VERSION,
            now_ms()
        ],
    )?;
    let mut advanced = false;
    if eligible
        && let Some((key, status)) = &unit
        && status == "discovered"
    {
        advanced = c.execute(
            "UPDATE task_units SET status = 'checked', evidence_class = 'registered_scan', checked_by_observation_id = ?1,
                updated_at_ms = ?2 WHERE instance_id = ?3 AND unit_key = ?4 AND status = 'discovered'",
            params![a.observation_id, now_ms(), instance, key],
        )? > 0;
        if advanced {
            c.execute(
                "UPDATE task_instances SET status = 'active', last_activity_at_ms = ?1 WHERE instance_id = ?2",
                params![now_ms(), instance],
            )?;
        }
    }
    Ok(json!({
        "instanceId": instance, "unitKey": unit.map(|u| u.0), "eligibleForCoverage": eligible,
        "eligibilityReason": reason, "unitAdvanced": advanced,
    }))
}

fn scan_hash(scan_id: &str) -> String {
    let digest = Sha256::digest(format!("{scan_id}\n{SCAN_SOURCE}").as_bytes());
    format!("sha256:{}", digest.iter().map(|b| format!("{b:02x}")).collect::<String>())
}

crate::tool! {
    /// `nova.coverage_scan` in the tool registry.
    pub static COVERAGE_SCAN = ToolDef::new(
        "nova.coverage_scan",
        "Run a registered coverage scan (nova_full_page_text_v1, nova_structured_dom_v1,                  nova_i18n_spellcheck_v1) on a tab. Its coverageEvidence is checked by Nova against what it                  measured, and trusted evidence checks the page's URL unit.",
        registry::schema::<CoverageScanArgs>,
        crate::handler!(Coverage::coverage_scan),
    )
    .bundles(&[Bundle::TaskMemory, Bundle::PageReadDebug])
    .tob(ActionKind::Read, "webpage", flags::CONTENT_EXPOSED | flags::DOM_EXPOSED | flags::FULL_DOCUMENT)
    .page(PageUse::Reads { perceives: true })
    .evidence(Evidence::RegisteredScan)
    .in_sequence()
    .read_only();
}

crate::tool! {
    /// `nova.task_instance_reconcile_coverage` in the tool registry.
    pub static RECONCILE_COVERAGE = ToolDef::new(
        "nova.task_instance_reconcile_coverage",
        "Replay stored coverage scans against a task run's open URL units; dryRun (default) proposes,                  dryRun=false applies when the user allows it.",
        registry::schema::<args::ReconcileArgs>,
        crate::handler!(Coverage::reconcile_coverage),
    )
    .bundles(&[Bundle::TaskMemory])
    .tob(ActionKind::Write, "none", 0);
}

impl Coverage<'_> {
    async fn current_tab(&self, target: &str) -> Option<TabInfo> {
        let tabs: Vec<TabInfo> =
            self.bridge.call(method::TABS_LIST, json!({}), DEFAULT_TIMEOUT).await.ok()?;
        tabs.into_iter().find(|t| t.target_id == target)
    }

    /// `nova.coverage_scan`.
    pub async fn coverage_scan(
        &self,
        rec: &mut CallRecord,
        a: CoverageScanArgs,
    ) -> Result<ToolReply, CallError> {
        if !scan::ALL.contains(&a.scan_id.as_str()) {
            return Err(CallError::UnknownScan(a.scan_id));
        }
        let opts = a.scope_options.clone().unwrap_or(ScopeOptions {
            include_shadow_dom: None,
            include_iframes: None,
            wait_for_hydration: None,
            hydration_timeout_ms: None,
        });
        let timeout = opts.hydration_timeout_ms.unwrap_or(5000);
        crate::call::check_range("scopeOptions.hydrationTimeoutMs", timeout, (0, 30_000, 5000))?;
        let tab = match self.tabs.resolve(&a.target_id).await {
            Ok(t) => t,
            Err(reply) => return Ok(reply),
        };
        let agent = rec.obs.agent_id.clone();
        self.leases.check(&tab.target_id, &agent).map_err(CallError::Owner)?;
        rec.obs.target_id = Some(tab.target_id.clone());
        rec.obs.url_before = Some(tab.url.clone());
        rec.obs.signal_flags |= flags::TARGET_RESOLVED;
        let params = ScanParams {
            target: tab.target_id.clone(),
            scan_id: a.scan_id.clone(),
            include_shadow_dom: opts.include_shadow_dom.unwrap_or(true),
            include_iframes: opts.include_iframes.unwrap_or(false),
            wait_for_hydration: opts.wait_for_hydration.unwrap_or(true),
            hydration_timeout_ms: timeout,
        };
        let wait = DEFAULT_TIMEOUT + std::time::Duration::from_millis(u64::from(timeout));
        let r: ScanResult = match self.bridge.call(method::SCAN, params, wait).await {
            Ok(r) => r,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        let after = self
            .current_tab(&tab.target_id)
            .await
            .map_or_else(|| r.document.effective_url.clone(), |t| t.url);
        rec.obs.url_after = Some(after.clone());
        rec.obs.signal_flags |= flags::CONTENT_EXPOSED | flags::DOM_EXPOSED | flags::FULL_DOCUMENT;
        let (trusted, reason, parsed) = trust(&r.raw, &after, r.document.visible_text_chars_measured);
        let text_chars = parsed["textChars"].as_u64().unwrap_or(0);
        let measured = r.document.visible_text_chars_measured;
        let ratio = if measured == 0 {
            0.0
        } else {
            ((text_chars as f64 / measured as f64).min(1.0) * 1000.0).round() / 1000.0
        };
        let mut extraction = json!({
            "textChars": text_chars, "textCoverageRatio": ratio,
            "includedVisibleText": parsed.get("includedVisibleText").cloned().unwrap_or(json!(a.scan_id != scan::STRUCTURED_DOM)),
            "includedAriaLabels": parsed.get("includedAriaLabels").cloned().unwrap_or(json!(false)),
            "includedInputs": parsed.get("includedInputs").cloned().unwrap_or(json!(false)),
            "includedAltText": parsed.get("includedAltText").cloned().unwrap_or(json!(false)),
            "includedShadowDom": parsed.get("includedShadowDom").cloned().unwrap_or(json!(false)),
            "includedIframes": parsed.get("includedIframes").cloned().unwrap_or(json!(false)),
        });
        if a.scan_id == scan::STRUCTURED_DOM {
            extraction["domSkeleton"] = json!({
                "tagSequence": parsed["tagSequence"], "landmarks": parsed["landmarks"], "roles": parsed["roles"],
                "counts": parsed["counts"],
            });
        }
        let (eligible, eligibility_reason) = eligibility(trusted, &r, &extraction, ratio, "");
        let evidence = json!({
            "version": 1, "producer": "nova_registered_scan", "registeredScanId": a.scan_id,
            "scanHash": scan_hash(&a.scan_id),
            "document": {
                "effectiveUrl": r.document.effective_url, "visibleTextCharsMeasured": measured,
                "nodeCountMeasured": r.document.node_count_measured, "iframeCount": r.document.iframe_count,
                "shadowRootCount": r.document.shadow_root_count, "readyState": r.document.ready_state,
            },
            "extraction": extraction,
            "trust": {"trusted": trusted, "reason": reason},
            "eligibility": {"eligible": eligible, "reason": eligibility_reason, "hydrationStable": r.hydration_stable},
        });
        rec.obs.evidence_json = Some(
            json!({
                "scanId": a.scan_id, "trusted": trusted, "reason": reason, "eligible": eligible,
                "eligibilityReason": eligibility_reason, "textCoverageRatio": ratio, "effectiveUrl": after,
                "textChars": text_chars,
            })
            .to_string(),
        );
        let mut raw_out = parsed.clone();
        if let Some(t) = raw_out.get("text").and_then(Value::as_str).map(str::to_owned)
            && t.chars().count() > MAX_RETURNED_TEXT
        {
            raw_out["text"] = json!(t.chars().take(MAX_RETURNED_TEXT).collect::<String>());
            raw_out["textTruncated"] = json!(true);
        }
        let mut spelling = Value::Null;
        if a.scan_id == scan::I18N_SPELLCHECK && trusted {
            let segments: Vec<(String, String)> = parsed["segments"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|s| {
                    (
                        s["lang"].as_str().unwrap_or_default().to_owned(),
                        s["text"].as_str().unwrap_or_default().to_owned(),
                    )
                })
                .collect();
            let reports = tokio::task::spawn_blocking(move || {
                segments.iter().map(|(lang, text)| spell::check(lang, text)).collect::<Vec<_>>()
            })
            .await
            .unwrap_or_default();
            spelling = json!({"languages": reports});
            let total: u64 = spelling["languages"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|l| l["misspellings"].as_array().cloned().unwrap_or_default())
                .map(|m| m["count"].as_u64().unwrap_or(0))
                .sum();
            spelling["misspellingsTotal"] = json!(total);
            if let Some(segs) = raw_out.get_mut("segments").and_then(Value::as_array_mut) {
                for s in segs {
                    let chars = s["text"].as_str().map_or(0, |t| t.chars().count());
                    s["chars"] = json!(chars);
                    if let Some(o) = s.as_object_mut() {
                        o.remove("text");
                    }
                }
            }
        }
        // Passive attribution to the agent's open instance on this origin.
        let settings = Settings::load(self.data);
        let unit = if settings.task_url_coverage_tracking_enabled {
            let leased = self.leases.get(&tab.target_id).is_some_and(|l| l.owner == agent);
            let att = Attribution {
                seq: rec.obs.seq,
                observation_id: &rec.obs.call_id,
                agent: &agent,
                tool: "nova.coverage_scan",
                url: &after,
                class: ("registered_scan", 7.0),
                trusted,
                scan: Some((&r, &extraction, ratio)),
                leased,
            };
            self.etm.with(|c| attribute(c, &att))?
        } else {
            json!({"skipReason": "tracking_disabled"})
        };
        let text = format!(
            "Coverage scan complete: {text_chars} text chars across {} nodes.",
            r.document.node_count_measured
        );
        let mut body = json!({
            "ok": true, "status": "ok", "scanCompleted": true, "isError": false, "targetId": tab.target_id,
            "rawUrlBefore": tab.url, "rawUrlAfter": after, "coverageEvidence": evidence, "raw": raw_out,
            "attribution": unit, "hydrationWaitMs": r.hydration_wait_ms, "scanMs": r.scan_ms,
        });
        if !spelling.is_null() {
            body["spellcheck"] = spelling;
        }
        Ok(ToolReply::ok(body).with_text(text))
    }

    /// The scan-recommendation hint `etm.coverage_scan_recommended` (docs/tasks.md,
    /// "Scan recommendation"): once per run, on a read by an agent whose latest open run is
    /// exhaustive with URL units, when no coverage scan ran on the tab in the last 10 minutes.
    pub fn scan_hint(&self, obs: &crate::observation::Observation) -> Option<Value> {
        // Reads of what the page shows (text or pixels), not scans themselves.
        use Evidence;
        let read = crate::registry::find(&obs.tool)
            .is_some_and(|t| matches!(t.evidence, Some(Evidence::TextLight | Evidence::Screenshot)));
        if !read || !obs.ok {
            return None;
        }
        let settings = Settings::load(self.data);
        let mode = settings.task_url_coverage_scan_recommended_gate_mode;
        if mode == crate::settings::GateMode::Off {
            return None;
        }
        let target = obs.target_id.as_deref()?;
        let found = self.etm.with(|c| {
            let latest: Option<(String, String, i64, bool, String)> = c
                .query_row(
                    "SELECT instance_id, effective_context_json, coverage_schema_version, scan_hint_fired, effective_task_kind
                     FROM task_instances WHERE agent_id = ?1 AND status IN ('pending', 'active')
                     ORDER BY last_activity_at_ms DESC LIMIT 1",
                    [&obs.agent_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
                )
                .optional()?;
            let Some((id, ctx, schema, fired, kind)) = latest else { return Ok(None) };
            let exhaustive = serde_json::from_str::<Value>(&ctx)
                .is_ok_and(|v| v["completionCondition"]["coverageMode"] == json!("exhaustive"));
            if !exhaustive || schema < 2 || fired {
                return Ok(None);
            }
            let recent: i64 = c.query_row(
                "SELECT COUNT(*) FROM observations WHERE tool = 'nova.coverage_scan' AND target_id = ?1 AND started_at_ms > ?2",
                params![target, now_ms() - 600_000],
                |r| r.get(0),
            )?;
            if recent > 0 {
                return Ok(None);
            }
            c.execute("UPDATE task_instances SET scan_hint_fired = 1 WHERE instance_id = ?1", [&id])?;
            let scan = match kind.as_str() {
                "content_audit" | "compliance" | "legal" => scan::I18N_SPELLCHECK,
                "route_inventory" => scan::STRUCTURED_DOM,
                _ => scan::FULL_PAGE_TEXT,
            };
            Ok(Some(json!({
                "gateId": "etm.coverage_scan_recommended", "status": "warned", "gateMode": mode.as_str(),
                "instanceId": id, "recommendedTool": "nova.coverage_scan", "recommendedScanId": scan,
                "message": "This exhaustive task checks URL units only on trusted scan evidence: run nova.coverage_scan \
                            on each page you review.",
            })))
        });
        found.ok().flatten()
    }

    /// Attribution of non-scan calls (visits, light reads): recorded, never advancing a unit.
    pub fn attribute_call(&self, obs: &crate::observation::Observation) {
        let settings = Settings::load(self.data);
        if !settings.task_url_coverage_tracking_enabled || !obs.executed {
            return;
        }
        let Some(class) = evidence_class(&obs.tool, &settings) else { return };
        if obs.tool == "nova.coverage_scan" {
            return;
        }
        let Some(url) = obs.url_after.as_deref().or(obs.url_before.as_deref()) else { return };
        let att = Attribution {
            seq: obs.seq,
            observation_id: &obs.call_id,
            agent: &obs.agent_id,
            tool: &obs.tool,
            url,
            class,
            trusted: false,
            scan: None,
            leased: true,
        };
        if let Err(e) = self.etm.with(|c| attribute(c, &att)) {
            tracing::warn!(error = %e, "URL coverage attribution failed");
        }
    }

    /// `nova.task_instance_reconcile_coverage`.
    pub async fn reconcile_coverage(
        &self,
        rec: &mut CallRecord,
        a: args::ReconcileArgs,
    ) -> Result<ToolReply, CallError> {
        let settings = Settings::load(self.data);
        if !a.dry_run && !settings.task_url_coverage_allow_agent_reconcile_apply {
            return Err(CallError::NotAllowed {
                reason: "reconcile_apply_not_allowed",
                message: "applying a reconcile needs the user's setting taskUrlCoverageAllowAgentReconcileApply=true \
                          (settings.json in the Nova data dir); run with dryRun=true to see the proposal"
                    .into(),
            });
        }
        let cutoff = match &a.observation_cutoff {
            None => now_ms(),
            Some(v) => parse_time(v).ok_or_else(|| {
                CallError::invalid(
                    "observationCutoff",
                    "observationCutoff must be epoch ms or an ISO 8601 UTC time",
                )
            })?,
        };
        rec.executed();
        self.recorder.flush().await;
        let run_id = format!("reconcile:{}:{}", a.instance_id, uuid::Uuid::new_v4().simple());
        self.etm.with(|c| {
            let Some(inst) = load_instance(c, &a.instance_id)? else {
                return Ok(soft("not_found", "Task instance not found.", json!({"instanceId": a.instance_id})));
            };
            let hour_ago = now_ms() - 3_600_000;
            let recent: i64 = c.query_row(
                "SELECT COUNT(*) FROM tuc_reconcile_runs WHERE instance_id = ?1 AND dry_run = ?2 AND at_ms > ?3",
                params![inst.instance_id, a.dry_run, hour_ago],
                |r| r.get(0),
            )?;
            let limit = if a.dry_run { RECONCILE_DRY_PER_HOUR } else { RECONCILE_APPLY_PER_HOUR };
            if recent >= limit {
                let oldest: i64 = c.query_row(
                    "SELECT MIN(at_ms) FROM tuc_reconcile_runs WHERE instance_id = ?1 AND dry_run = ?2 AND at_ms > ?3",
                    params![inst.instance_id, a.dry_run, hour_ago],
                    |r| r.get(0),
                )?;
                let mut reply = soft(
                    "rate_limited",
                    format!("at most {limit} {} run(s) per instance and hour", if a.dry_run { "dry" } else { "apply" }),
                    json!({"retryAfterMs": (oldest + 3_600_000 - now_ms()).max(0), "retryable": true}),
                );
                reply.structured["instanceId"] = json!(inst.instance_id);
                return Ok(reply);
            }
            // Trusted, eligible scans of this agent, matched to open URL units by URL hash.
            let scans: Vec<(String, i64, String, i64)> = c
                .prepare(
                    "SELECT call_id, seq, evidence_json, started_at_ms FROM observations
                     WHERE tool = 'nova.coverage_scan' AND agent_id = ?1 AND ok = 1 AND evidence_json IS NOT NULL
                       AND started_at_ms <= ?2 ORDER BY seq",
                )?
                .query_map(params![inst.agent_id, cutoff], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect::<Result<_, _>>()?;
            let last_run: Option<(i64, Option<i64>, Option<String>)> = c
                .query_row(
                    "SELECT at_ms, last_observation_at, last_observation_id FROM tuc_reconcile_runs
                     WHERE instance_id = ?1 AND dry_run = ?2 ORDER BY at_ms DESC LIMIT 1",
                    params![inst.instance_id, a.dry_run],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            let newest = scans.last().map(|s| (s.0.clone(), s.1));
            if let (Some((at, Some(last_seq), last_id)), Some((_, newest_seq))) = (&last_run, &newest)
                && newest_seq <= last_seq
            {
                return Ok(ToolReply::ok(json!({
                    "ok": true, "status": "ok", "instanceId": inst.instance_id, "dryRun": a.dry_run,
                    "result": "no_new_evidence", "lastRunAt": at, "lastObservationId": last_id,
                    "observationsConsidered": 0, "proposedUpgrades": [],
                })));
            }
            let mut proposed = Vec::new();
            let mut deltas = Vec::new();
            for (call_id, _seq, ev, _at) in &scans {
                let ev: Value = serde_json::from_str(ev).unwrap_or(Value::Null);
                if ev["trusted"] != json!(true) || ev["eligible"] != json!(true) {
                    continue;
                }
                let Some(norm) = ev["effectiveUrl"].as_str().and_then(crate::url::normalize) else { continue };
                let unit: Option<(String, String)> = c
                    .query_row(
                        "SELECT unit_key, status FROM task_units WHERE instance_id = ?1 AND url_hash = ?2",
                        params![inst.instance_id, crate::url::url_hash(&norm)],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                let Some((key, status)) = unit else { continue };
                if status != "discovered" || proposed.iter().any(|p: &Value| p["unitKey"] == json!(key)) {
                    continue;
                }
                proposed.push(json!({
                    "unitKey": key, "oldStatus": status, "newStatus": "checked", "observationId": call_id,
                    "evidenceKind": "registered_scan", "eligibilityRule": "trusted_eligible_registered_scan_v1",
                }));
            }
            let tx = crate::store::write_tx(c)?;
            for p in &proposed {
                let key = p["unitKey"].as_str().unwrap_or_default();
                let (new_status, reason) = if a.dry_run {
                    ("checked_proposed", "dry_run")
                } else {
                    let n = tx.execute(
                        "UPDATE task_units SET status = 'checked', evidence_class = 'registered_scan',
                            checked_by_observation_id = ?1, updated_at_ms = ?2
                         WHERE instance_id = ?3 AND unit_key = ?4 AND status = 'discovered'",
                        params![p["observationId"].as_str(), now_ms(), inst.instance_id, key],
                    )?;
                    if n > 0 { ("checked", "applied") } else { ("discovered", "cas_no_op") }
                };
                deltas.push(json!({"unitKey": key, "newStatus": new_status, "reason": reason}));
            }
            tx.execute(
                "INSERT INTO tuc_reconcile_runs (run_id, instance_id, dry_run, result, last_observation_id, last_observation_at,
                    proposed_json, at_ms) VALUES (?1, ?2, ?3, 'ok', ?4, ?5, ?6, ?7)",
                params![
                    run_id,
                    inst.instance_id,
                    a.dry_run,
                    newest.as_ref().map(|n| n.0.clone()),
                    newest.as_ref().map(|n| n.1),
                    json!(deltas).to_string(),
                    now_ms()
                ],
            )?;
            tx.commit()?;
            let text = format!(
                "Reconcile ({}): {} upgrades over {} observations.",
                if a.dry_run { "dryRun" } else { "applied" },
                proposed.len(),
                scans.len()
            );
            Ok(ToolReply::ok(json!({
                "ok": true, "status": "ok", "instanceId": inst.instance_id, "dryRun": a.dry_run, "runId": run_id,
                "result": "ok", "ruleVersion": 1, "normalizerVersion": crate::url::NORMALIZER_VERSION,
                "observationsConsidered": scans.len(), "proposedUpgrades": proposed, "unitDeltas": deltas,
                "historyCompleteness": 1.0,
            }))
            .with_text(text))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trust_checks_in_order() {
        let url = "http://x.test/a";
        assert_eq!(trust("{\"effectiveUrl\":", url, 10).1, "scan_result_not_json");
        assert_eq!(trust("null", url, 10).1, "scan_returned_null_or_empty");
        assert_eq!(
            trust(r#"{"effectiveUrl":"http://x.test/b","textChars":1}"#, url, 10).1,
            "effective_url_mismatch"
        );
        assert_eq!(
            trust(r#"{"effectiveUrl":"http://x.test/a","textChars":15}"#, url, 10).1,
            "claimed_text_exceeds_measured"
        );
        assert_eq!(
            trust(r#"{"effectiveUrl":"http://x.test/a/","textChars":14}"#, url, 10).1,
            "server_registered_scan"
        );
    }
}
