//! The platform tools (docs/pks.md, "Platform templates"): `nova.pks_platform_list` and
//! `nova.pks_platform_get` read the consent platforms Nova knows; `nova.pks_platform_seed` looks
//! for them on a tab's page and stores each one found as a candidate (L0) of that site, to be
//! promoted on evidence like any other entry.

use nova_shared::protocol::method;
use nova_shared::protocol::pks::{Probe, ProbeParams, ProbeResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::platforms::{self, Platform};
use super::records::{self, Upserted};
use super::{MAX_PER_DOMAIN, Pks, scope};
use crate::bridge::DEFAULT_TIMEOUT;
use crate::call::{CallError, CallRecord, ToolReply};
use crate::observation::ActionKind;
use crate::registry::{self, Bundle, PageUse, ToolDef};

crate::tool_args! {
    /// `nova.pks_platform_seed` arguments.
    #[derive(Debug, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    pub struct SeedArgs [tab, agent] {
        /// The site (default: the tab's); the tab must show it.
        #[serde(default)]
        pub scope: Option<String>,
        /// Only these platforms (keys from nova.pks_platform_list; default all).
        #[serde(default)]
        pub platforms: Option<Vec<String>>,
    }
}

/// `nova.pks_platform_get` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GetArgs {
    /// The platform: its key (`onetrust`), name or an alias (`__tcfapi` is not one: it is shared).
    pub platform: String,
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// `nova.pks_platform_list` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ListArgs {
    /// Calling agent.
    #[serde(default)]
    pub agent_id: Option<String>,
}

/// What the platform tools reach.
pub struct PksPlatforms<'h> {
    /// The PKS tables.
    pub pks: &'h Pks,
    /// The tab a call names.
    pub tabs: crate::tabs::Tabs<'h>,
    /// The extension connection.
    pub bridge: &'h crate::bridge::Bridge,
}

impl<'h> From<&'h crate::hub::Hub> for PksPlatforms<'h> {
    fn from(hub: &'h crate::hub::Hub) -> Self {
        Self { pks: &hub.pks, tabs: hub.tabs(), bridge: &hub.bridge }
    }
}

crate::tool! {
    /// `nova.pks_platform_seed` in the tool registry.
    pub static PKS_PLATFORM_SEED = ToolDef::new(
        "nova.pks_platform_seed",
        "Look for the consent platforms Nova knows (OneTrust, Cookiebot, Quantcast Choice, Didomi, \
         Usercentrics and its CMP v3, iubenda, Sourcepoint) on a tab's page and store each one found as a \
         candidate (L0) of the site whose playbook declines.",
        registry::schema::<SeedArgs>,
        crate::handler!(PksPlatforms::pks_platform_seed),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Write, "knowledge", 0)
    .page(PageUse::Reads { perceives: false });
}

crate::tool! {
    /// `nova.pks_platform_get` in the tool registry.
    pub static PKS_PLATFORM_GET = ToolDef::new(
        "nova.pks_platform_get",
        "One consent platform Nova knows: how it shows on a page and its template phenomenon.",
        registry::schema::<GetArgs>,
        crate::handler!(PksPlatforms::pks_platform_get),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

crate::tool! {
    /// `nova.pks_platform_list` in the tool registry.
    pub static PKS_PLATFORM_LIST = ToolDef::new(
        "nova.pks_platform_list",
        "The consent platforms Nova knows, with how each shows on a page.",
        registry::schema::<ListArgs>,
        crate::handler!(PksPlatforms::pks_platform_list),
    )
    .bundles(&[Bundle::PksLearning])
    .tob(ActionKind::Read, "knowledge", 0)
    .page(PageUse::None)
    .read_only();
}

fn describe(p: &Platform) -> Value {
    json!({
        "key": p.key, "name": p.name, "aliases": p.aliases, "markers": p.markers, "banner": p.banner,
        "declineSelector": p.decline.0, "declineText": p.decline.1, "declineCall": p.decline_call,
        "locksScroll": p.locks_scroll, "phenomenonId": p.phenomenon_id(),
    })
}

impl PksPlatforms<'_> {
    /// `nova.pks_platform_list`.
    pub async fn pks_platform_list(
        &self,
        rec: &mut CallRecord,
        _a: ListArgs,
    ) -> Result<ToolReply, CallError> {
        rec.executed();
        let all: Vec<Value> = platforms::ALL.iter().map(describe).collect();
        Ok(ToolReply::ok(json!({"ok": true, "count": all.len(), "platforms": all})))
    }

    /// `nova.pks_platform_get`.
    pub async fn pks_platform_get(&self, rec: &mut CallRecord, a: GetArgs) -> Result<ToolReply, CallError> {
        rec.executed();
        let Some(p) = platforms::find(&a.platform) else {
            return Ok(ToolReply::ok(json!({
                "ok": true, "found": false, "platform": a.platform,
                "availablePlatforms": platforms::ALL.iter().map(|p| p.key).collect::<Vec<_>>(),
            })));
        };
        Ok(ToolReply::ok(
            json!({"ok": true, "found": true, "platform": describe(p), "template": p.template()}),
        ))
    }

    /// `nova.pks_platform_seed`.
    pub async fn pks_platform_seed(&self, rec: &mut CallRecord, a: SeedArgs) -> Result<ToolReply, CallError> {
        let wanted: Vec<&'static Platform> = match &a.platforms {
            None => platforms::ALL.iter().collect(),
            Some(keys) => {
                let mut out = Vec::new();
                for (i, k) in keys.iter().enumerate() {
                    let p = platforms::find(k).ok_or_else(|| {
                        CallError::invalid(
                            &format!("platforms[{i}]"),
                            format!(
                                "`platforms[{i}]` `{k}` is not a platform Nova knows; known: {}",
                                platforms::ALL.iter().map(|p| p.key).collect::<Vec<_>>().join(", ")
                            ),
                        )
                    })?;
                    out.push(p);
                }
                out
            }
        };
        let given = a.scope.as_deref().map(scope::normalize).transpose()?;
        let tab = match self.tabs.enter(rec, &a.target_id, true).await? {
            Ok(tab) => tab,
            Err(reply) => return Ok(reply),
        };
        let site = match scope::of_tab(given.as_deref(), &tab.url) {
            Ok(site) => site,
            Err(reply) => return Ok(*reply),
        };
        let probe = ProbeParams {
            target: tab.target_id.clone(),
            probes: wanted
                .iter()
                .flat_map(|p| {
                    [
                        Probe::Present { selectors: p.markers.iter().map(|m| (*m).to_owned()).collect() },
                        Probe::Dom { selector: p.banner.to_owned() },
                    ]
                })
                .collect(),
            surface: None,
            checks: Vec::new(),
        };
        let seen = match self.bridge.call::<ProbeResult>(method::PKS_PROBE, probe, DEFAULT_TIMEOUT).await {
            Ok(r) => r,
            Err(e) => return Ok(ToolReply::bridge_failure(&e)),
        };
        rec.executed();
        let now = crate::time::now_ms();
        let found: Vec<(&Platform, bool)> = wanted
            .iter()
            .zip(seen.present.chunks(2))
            .filter(|(_, p)| p.first() == Some(&true))
            .map(|(pl, p)| (*pl, p.get(1) == Some(&true)))
            .collect();
        let detected = self.pks.with(|c| {
            let tx = crate::store::write_tx(c)?;
            let mut out = Vec::new();
            for (p, showing) in &found {
                let id = p.phenomenon_id();
                let known = records::entry(&tx, &site, &id)?;
                let full = records::entries(&tx, &site)?.len() >= MAX_PER_DOMAIN;
                let seeded = match (&known, full) {
                    (Some(_), _) | (None, true) => None,
                    (None, false) => {
                        let origin = format!("platform:{}", p.key);
                        Some(records::upsert(&tx, &site, &id, &p.template(), ("L0", &origin), now)?)
                    }
                };
                let level = records::entry(&tx, &site, &id)?.map(|e| e.level);
                out.push(json!({
                    "platform": p.key, "name": p.name, "phenomenonId": id, "bannerShowing": showing,
                    "seeded": matches!(seeded, Some(Upserted::Created)), "alreadyKnown": known.is_some(),
                    "learningLevel": level,
                    "skippedBecause": (known.is_none() && full).then_some("pks.domain_full"),
                }));
            }
            tx.commit()?;
            Ok(out)
        })?;
        let seeded = detected.iter().filter(|d| d["seeded"] == true).count();
        Ok(ToolReply::ok(json!({
            "ok": true, "scope": site, "targetId": tab.target_id, "checked": wanted.len(),
            "detected": detected, "seeded": seeded,
            "hint": if seeded > 0 {
                "Seeded entries are candidates (L0): promote them with nova.learn_promote as they prove themselves."
            } else { "" },
        })))
    }
}
