//! The consent platforms Nova knows (docs/pks.md, "Platform templates"): how each shows on a
//! page (its script hosts and root elements, as the vendor ships them) and a template
//! phenomenon whose playbook declines.

use super::model::{
    Action, ActionType, Context, Effect, Fingerprint, Kind, MaxScope, Phenomenon, Playbook, Polarity, Policy,
    Signal, SignalKind, Verify, VerifyType,
};

/// A consent platform.
#[derive(Debug)]
pub struct Platform {
    /// Its key (`onetrust`).
    pub key: &'static str,
    /// Its name.
    pub name: &'static str,
    /// Other names agents use for it in `vendor` signals (its global object, its API).
    pub aliases: &'static [&'static str],
    /// Selectors whose presence shows it is on the page: its script tags, its root element.
    pub markers: &'static [&'static str],
    /// Its banner as shown (the surface its playbook is held to).
    pub banner: &'static str,
    /// Its decline control, and the text it shows.
    pub decline: (&'static str, &'static str),
    /// Its accept control (never used by the template; fixtures record that it stays unclicked).
    pub accept: &'static str,
    /// Its JavaScript call that declines (on the vendor-call allowlist).
    pub decline_call: Option<&'static str>,
    /// Whether the banner stops the page from scrolling until answered.
    pub locks_scroll: bool,
}

impl Platform {
    /// The stable id of its template phenomenon.
    pub fn phenomenon_id(&self) -> String {
        format!("platform_{}", self.key)
    }

    /// Its template: recognised by its banner and its scripts, resolved by declining, verified
    /// by the banner being gone and the page free (and scrolling, when the banner locked it).
    pub fn template(&self) -> Phenomenon {
        let signal = |kind, m: &str| Signal { kind, matches: m.to_owned(), locale: None };
        let mut verify = vec![
            Verify {
                kind: VerifyType::Absent,
                selector: Some(self.banner.to_owned()),
                threshold: None,
                timeout_ms: Some(3000),
            },
            Verify {
                kind: VerifyType::ObstructionCleared,
                selector: None,
                threshold: Some(0.05),
                timeout_ms: Some(3000),
            },
        ];
        if self.locks_scroll {
            verify.push(Verify {
                kind: VerifyType::ScrollUnlocked,
                selector: None,
                threshold: None,
                timeout_ms: Some(3000),
            });
        }
        Phenomenon {
            id: Some(self.phenomenon_id()),
            kind: Kind::ConsentCmp,
            fingerprint: Fingerprint {
                signals: vec![signal(SignalKind::Dom, self.banner), signal(SignalKind::Vendor, self.key)],
                // The banner alone is enough: sites often serve the vendor's script themselves.
                min_confidence: 0.5,
            },
            playbook: Playbook {
                policy: Policy::RejectPreferred,
                actions: vec![Action {
                    kind: ActionType::Click,
                    selector: Some(self.decline.0.to_owned()),
                    fallback_selectors: Vec::new(),
                    timeout_ms: Some(3000),
                    declared_polarity: Some(Polarity::Reject),
                    target_visible_text: Some(self.decline.1.to_owned()),
                    max_scope: Some(MaxScope::ScopedToCmpSurface),
                    allowed_effect: Some(Effect::ConsentStateOnly),
                    value_source: None,
                    vendor_api_call: self.decline_call.map(str::to_owned),
                    key: None,
                }],
                verify,
            },
            context: Context { routes: Some(vec!["*".to_owned()]), ..Context::default() },
        }
    }
}

/// Every platform, in the order they are tried. Selectors are the vendors' own, as their
/// banners ship (docs/pks.md lists where each was read).
pub static ALL: &[Platform] = &[
    Platform {
        key: "onetrust",
        name: "OneTrust",
        aliases: &["Optanon", "OptanonWrapper"],
        markers: &[
            "script[src*=\"cdn.cookielaw.org\"]",
            "script[src*=\"otSDKStub\"]",
            "#onetrust-consent-sdk",
        ],
        banner: "#onetrust-banner-sdk",
        decline: ("#onetrust-reject-all-handler", "Reject All"),
        accept: "#onetrust-accept-btn-handler",
        decline_call: Some("OneTrust.RejectAll"),
        locks_scroll: false,
    },
    Platform {
        key: "cookiebot",
        name: "Cookiebot",
        aliases: &["Cybot", "CookiebotDialog"],
        markers: &["script[src*=\"consent.cookiebot.com\"]", "#CybotCookiebotDialog"],
        banner: "#CybotCookiebotDialog",
        decline: ("#CybotCookiebotDialogBodyButtonDecline", "Deny"),
        accept: "#CybotCookiebotDialogBodyLevelButtonLevelOptinAllowAll",
        decline_call: Some("Cookiebot.withdraw"),
        locks_scroll: false,
    },
    Platform {
        key: "quantcast",
        name: "Quantcast Choice",
        aliases: &["InMobi", "InMobi Choice", "qc-cmp2"],
        markers: &[
            "script[src*=\"cmp.inmobi.com\"]",
            "script[src*=\"cmp.quantcast.com\"]",
            "script[src*=\"quantcast.mgr.consensu.org\"]",
            "#qc-cmp2-container",
        ],
        banner: "#qc-cmp2-ui",
        decline: ("#qc-cmp2-ui #disagree-btn", "DISAGREE"),
        accept: "#qc-cmp2-ui .qc-cmp2-summary-buttons button[mode=\"primary\"]",
        decline_call: None,
        locks_scroll: false,
    },
    Platform {
        key: "didomi",
        name: "Didomi",
        aliases: &["didomiOnReady"],
        markers: &["script[src*=\"sdk.privacy-center.org\"]", "#spcloader", "#didomi-host"],
        banner: "#didomi-notice",
        decline: ("#didomi-notice-disagree-button", "Disagree and close"),
        accept: "#didomi-notice-agree-button",
        decline_call: Some("Didomi.setUserDisagreeToAll"),
        locks_scroll: false,
    },
    Platform {
        key: "usercentrics",
        name: "Usercentrics",
        aliases: &["UC_UI"],
        markers: &["script[src*=\"app.usercentrics.eu\"]", "#usercentrics-root"],
        banner: "#usercentrics-root >>> [data-testid=\"uc-container\"]",
        decline: ("#usercentrics-root >>> button[data-testid=\"uc-deny-all-button\"]", "Deny"),
        accept: "#usercentrics-root >>> button[data-testid=\"uc-accept-all-button\"]",
        decline_call: Some("UC_UI.denyAllConsents"),
        locks_scroll: true,
    },
    // Usercentrics' newer interface (CMP v3, loaded from `web.cmp.usercentrics.eu`): another
    // host element, ids and data attributes instead of test ids, another API object. Once
    // answered, its dialog's id is taken by a small privacy button (class `privacyButton`),
    // which is not the banner.
    Platform {
        key: "usercentrics_v3",
        name: "Usercentrics CMP v3",
        aliases: &["__ucCmp"],
        markers: &["script[src*=\"web.cmp.usercentrics.eu\"]", "#usercentrics-cmp-ui"],
        banner: "#usercentrics-cmp-ui >>> #uc-main-dialog:not(.privacyButton)",
        decline: ("#usercentrics-cmp-ui >>> button[data-action-type=\"deny\"]", "Deny"),
        accept: "#usercentrics-cmp-ui >>> button[data-action-type=\"accept\"]",
        decline_call: Some("__ucCmp.denyAllConsents"),
        locks_scroll: false,
    },
    Platform {
        key: "iubenda",
        name: "iubenda",
        aliases: &["_iub"],
        markers: &[
            "script[src*=\"cdn.iubenda.com\"]",
            "script[src*=\"cs.iubenda.com\"]",
            "#iubenda-cs-banner",
        ],
        banner: "#iubenda-cs-banner",
        decline: ("#iubenda-cs-banner .iubenda-cs-reject-btn", "Reject"),
        accept: "#iubenda-cs-banner .iubenda-cs-accept-btn",
        decline_call: None,
        locks_scroll: false,
    },
    Platform {
        key: "sourcepoint",
        name: "Sourcepoint",
        aliases: &["_sp_", "_sp_queue"],
        markers: &["script[src*=\"privacy-mgmt.com\"]", "iframe[title=\"SP Consent Message\"]"],
        banner: "iframe[title=\"SP Consent Message\"]",
        decline: ("iframe[title=\"SP Consent Message\"] >>> button.sp_choice_type_13", "Reject all"),
        accept: "iframe[title=\"SP Consent Message\"] >>> button.sp_choice_type_11",
        decline_call: None,
        locks_scroll: true,
    },
];

/// The platform a `vendor` signal names (its key, name or an alias, any case; `window.` and a
/// trailing call are ignored).
pub fn find(name: &str) -> Option<&'static Platform> {
    let n = name.trim().trim_start_matches("window.").to_ascii_lowercase();
    let n = n.split(['.', '(']).next().unwrap_or_default();
    ALL.iter().find(|p| {
        p.key == n || p.name.eq_ignore_ascii_case(n) || p.aliases.iter().any(|a| a.eq_ignore_ascii_case(n))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_passes_the_upsert_rules_and_is_found_by_its_names() {
        assert_eq!(ALL.len(), 8);
        for p in ALL {
            let t = p.template();
            crate::pks::poison::check(&t).unwrap_or_else(|e| panic!("{}: {e:?}", p.key));
            assert!(std::ptr::eq(find(p.key).expect("key"), p));
            assert!(std::ptr::eq(find(&p.name.to_uppercase()).expect("name"), p));
            for a in p.aliases {
                assert!(std::ptr::eq(find(&format!("window.{a}()")).expect("alias"), p), "{a}");
            }
            assert!(
                !p.markers.is_empty() && p.markers.iter().all(|m| nova_shared::selector::parse(m).is_ok())
            );
        }
        assert!(find("acme").is_none());
    }
}
