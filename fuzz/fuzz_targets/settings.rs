//! `settings.json` (`nova_host::settings::Settings`): the person's gate modes, domain policy and
//! limits, edited by hand or by the options page, read on every tool call.
//!
//! Checks: nothing panics; settings that parse are written (as `Settings::save` writes them)
//! and read back equal; the domain policy answers for every domain it names, its subdomains and
//! with a port, and blocks nothing when it names no domain.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_host::settings::Settings;

fuzz_target!(|data: &[u8]| {
    let Ok(settings) = serde_json::from_slice::<Settings>(data) else { return };
    let saved = serde_json::to_string_pretty(&settings).expect("serialise");
    let loaded: Settings = serde_json::from_str(&saved).expect("saved settings load");
    assert_eq!(loaded, settings, "settings round-trip through save and load");

    let groups = ["read", "navigate", "interact", "default", ""];
    for domain in settings.domain_policy.keys() {
        for host in [domain.clone(), format!("www.{domain}"), format!("{domain}:8080"), domain.to_uppercase()]
        {
            for group in groups {
                let _ = settings.domain_blocked(&host, group);
            }
        }
    }
    if settings.domain_policy.is_empty() {
        for group in groups {
            assert!(!settings.domain_blocked("example.com", group));
        }
    }
});
