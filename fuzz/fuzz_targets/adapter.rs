//! Adapter files (`<data dir>/adapters/*.json`, read by `nova_host::adapters::load` with the
//! parser of `nova_shared::adapter`): selector sets per kind of page, written by people.
//!
//! Checks: nothing panics; an adapter that parses serialises and parses back to itself (what
//! the host sends the page reads back the same); completing it with the generic adapter keeps
//! every selector it sets and fills every one it leaves out; a site adapter the host accepts is
//! chosen for a URL containing its `urlContains`, and not for one that does not.

#![no_main]

use libfuzzer_sys::fuzz_target;
use nova_host::adapters::service_key_ok;
use nova_shared::adapter::{self, Adapter};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(site) = serde_json::from_str::<Adapter>(text) else { return };
    let json = serde_json::to_string(&site).expect("serialise");
    let back: Adapter = serde_json::from_str(&json).expect("an adapter we wrote parses");
    assert_eq!(back, site, "an adapter round-trips");

    let generic = adapter::generic();
    let done = site.clone().over(&generic);
    let pairs = |a: &Adapter| -> Vec<Option<String>> {
        vec![
            a.chat.composer.clone(),
            a.chat.send.clone(),
            a.chat.messages.clone(),
            a.chat.assistant.clone(),
            a.chat.streaming.clone(),
            a.chat.error_banner.clone(),
            a.form.submit.clone(),
            a.form.success.clone(),
            a.form.error_note.clone(),
            a.form.validation_error.clone(),
            a.login.username.clone(),
            a.login.password.clone(),
            a.login.submit.clone(),
            a.login.logged_in.clone(),
            a.picker.model.clone(),
            a.picker.model_selected.clone(),
            a.picker.model_options.clone(),
            a.picker.workspace.clone(),
            a.account.display_name.clone(),
            a.account.email.clone(),
            a.account.plan.clone(),
        ]
    };
    for ((own, fallback), got) in pairs(&site).into_iter().zip(pairs(&generic)).zip(pairs(&done)) {
        assert_eq!(got, own.or(fallback), "a selector left out comes from the generic adapter");
    }
    assert_eq!(
        (&done.name, &done.url_contains, &done.service),
        (&site.name, &site.url_contains, &site.service)
    );

    // What `adapters::load` accepts as a site adapter.
    let accepted = !site.url_contains.is_empty() && site.service.as_deref().is_none_or(service_key_ok);
    if accepted {
        let url = format!("https://{}/page", site.url_contains);
        let chosen = adapter::choose(std::slice::from_ref(&site), &url);
        assert_eq!(chosen, done, "a matching site adapter is chosen, completed");
        if !"https://nova.invalid/".contains(&site.url_contains) {
            assert_eq!(adapter::choose(&[site], "https://nova.invalid/"), generic);
        }
    }
});
