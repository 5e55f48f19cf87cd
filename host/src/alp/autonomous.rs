//! Autonomous learning (FR-1, docs/learning.md, "Autonomous learning"): a click that keeps
//! working is stored without an agent asking, as a candidate (`L0`, id `auto_learning:…`), only
//! when every condition holds:
//!
//! - the selector is auto-safe: anchored on an id, `data-testid`, `name` or `aria-label`, not
//!   fragile, not broad, and not agreeing to anything (consent is never learned as accepted);
//! - at least 3 successes in a row on it on the site, and no failure in 30 days;
//! - on at least 2 pages (navigation contexts) and 2 documents (DOM states);
//! - a verified origin: https, or the machine itself (loopback), and a site not marked `low` trust;
//! - no stored entry holds the selector yet, and no semantic opportunity is open on the site
//!   (autonomous learning is held back until the agent resolved it).
//!
//! What it writes is review knowledge like anything `nova.learn_generate` writes: it is promoted
//! only through the gates.

use rusqlite::Connection;
use serde_json::{Value, json};

use super::generate::{self, Draft};
use super::suggest;
use crate::call::CallError;
use crate::lcj::{attribution, keys, opportunities, rows};
use crate::pks::model::Polarity;
use crate::pks::{fragile, poison, records};

/// Successes in a row a selector needs.
pub const MIN_SUCCESSES: usize = 3;
/// Distinct pages, and distinct documents, it must have worked on.
pub const MIN_CONTEXTS: usize = 2;

/// Whether `sel` is safe to learn without an agent.
pub fn auto_safe(sel: &str) -> bool {
    let anchored = (sel.starts_with('#') && !sel.contains([' ', '>', '+', '~', ',']))
        || ["[data-testid", "[name=", "[aria-label"].iter().any(|a| sel.contains(a));
    anchored
        && fragile::why(sel).is_none()
        && poison::broad(sel).is_none()
        && poison::reads_as(sel) != Some(Polarity::Accept)
}

/// Whether `url` is an origin autonomous learning may write for.
pub fn verified_origin(url: &str) -> bool {
    let Some(p) = crate::url::parts(url) else { return false };
    let host = p.host.rsplit_once(':').map_or(p.host.as_str(), |(h, _)| h);
    p.scheme == "https"
        || host == "127.0.0.1"
        || host == "localhost"
        || host.ends_with(".localhost")
        || host == "[::1]"
}

/// Considers `selector` on `host` after a successful click at `url`: writes an autonomous
/// candidate when every condition holds (its proposal), says when an open semantic opportunity
/// held it back (`heldBack`), else nothing.
pub fn consider(
    c: &Connection,
    (host, url): (&str, &str),
    selector: &str,
    owner: &str,
    now: i64,
) -> Result<Option<Value>, CallError> {
    let store = |e: rusqlite::Error| CallError::Store(e.to_string());
    if !auto_safe(selector) || !verified_origin(url) {
        return Ok(None);
    }
    let domain = records::domain(c, host).map_err(store)?;
    if domain.as_ref().is_some_and(|d| d.trust == "low") {
        return Ok(None);
    }
    let entries = records::entries(c, host).map_err(store)?;
    if entries.iter().any(|e| attribution::selectors(e).iter().any(|s| s == selector)) {
        return Ok(None);
    }
    let seen: Vec<rows::Seen> = rows::with_selector(c, host, selector, now - suggest::WINDOW_MS)
        .map_err(store)?
        .into_iter()
        .filter(|o| o.kind != "perceive_signature")
        .collect();
    if seen.iter().any(|o| o.outcome < 0) || seen.iter().take_while(|o| o.outcome > 0).count() < MIN_SUCCESSES
    {
        return Ok(None);
    }
    let distinct = |key: &str| {
        let mut v: Vec<String> = seen.iter().map(|o| o.payload[key].to_string()).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    let documents = {
        let mut v: Vec<String> =
            seen.iter().map(|o| format!("{}#{}", o.payload["url"], o.payload["navEpoch"])).collect();
        v.sort();
        v.dedup();
        v.len()
    };
    if distinct("url") < MIN_CONTEXTS || documents < MIN_CONTEXTS {
        return Ok(None);
    }
    let clusters = suggest::clusters(host, &seen);
    let Some(mut p) =
        generate::propose(&clusters, &entries).into_iter().find(|p| matches!(p.draft, Draft::Phenomenon(_)))
    else {
        return Ok(None);
    };
    let open = opportunities::open_on(c, host).map_err(store)?;
    if let Some(o) = open.first() {
        return Ok(Some(json!({"heldBack": true, "selector": selector, "opportunityId": o.id,
            "reason": "a semantic learning opportunity is open on the site: resolve it first"})));
    }
    let id = format!("auto_learning:{}", &keys::stable_id(&p.candidate_key)[8..]);
    if let Draft::Phenomenon(doc) = &mut p.draft {
        doc["id"] = json!(id);
    }
    p.reason = format!("autonomous: {}", p.reason);
    let mut written = generate::write(c, host, &p, (owner, "auto_learning"), now)?;
    written["heldBack"] = json!(false);
    Ok(Some(written))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_anchored_exact_selectors_on_verified_origins_are_learned_alone() {
        assert!(auto_safe("#newsletter-close"));
        assert!(auto_safe("button[data-testid=close]"));
        assert!(!auto_safe("main > button:nth-of-type(1)"), "fragile");
        assert!(!auto_safe("#list li"), "not anchored alone");
        assert!(!auto_safe("#accept-all"), "never learns to agree");
        assert!(!auto_safe(".close"), "a class is not an anchor");
        assert!(verified_origin("https://shop.example/a"));
        assert!(verified_origin("http://127.0.0.1:8080/x"));
        assert!(verified_origin("http://www.site.localhost:9/"));
        assert!(!verified_origin("http://shop.example/"));
        assert!(!verified_origin("file:///tmp/x.html"));
    }
}
