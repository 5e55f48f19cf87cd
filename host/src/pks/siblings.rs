//! Sibling sites (docs/pks.md, "Sibling sites"): sites of the same registrable domain
//! (`shop.example.com` and `www.example.com`) may use each other's active entries. Before its
//! first use on the site that inherits it, an entry's fingerprint must be found live on that
//! site's page (at most one such check per registrable domain and session); that verification
//! lasts until the source's knowledge changes, and three failures in a row suppress it there
//! while the source stays untouched.

use std::collections::HashSet;
use std::sync::Mutex;

use rusqlite::{Connection, OptionalExtension, params};

use super::records::{self, Entry};
use crate::settings::SiblingPolicy;

/// Failures in a row that suppress an inherited entry on the site that uses it.
pub const SUPPRESS_AFTER: i64 = 3;

/// Second-level labels under which registrations sit (`example.co.uk`).
const SECOND_LEVEL: &[&str] = &[
    "co.uk", "org.uk", "ac.uk", "gov.uk", "me.uk", "com.au", "net.au", "org.au", "co.nz", "co.jp", "ne.jp",
    "or.jp", "com.br", "com.cn", "com.mx", "co.in", "co.za", "com.tr", "com.sg", "com.hk", "co.kr", "com.ar",
];

/// The registrable domain of a scope (`shop.example.co.uk:8443` -> `example.co.uk:8443`): the
/// port stays, since sites on other ports are other sites. `None` for an IP address.
pub fn registrable(scope: &str) -> Option<String> {
    let (host, port) = match scope.rsplit_once(':') {
        Some((h, p)) if p.chars().all(|c| c.is_ascii_digit()) && !h.contains(':') => (h, Some(p)),
        _ => (scope, None),
    };
    if host.parse::<std::net::IpAddr>().is_ok() || host.starts_with('[') {
        return None;
    }
    let labels: Vec<&str> = host.split('.').collect();
    let tail2 = labels.len().checked_sub(2).map(|i| labels[i..].join("."));
    let keep = if tail2.as_deref().is_some_and(|t| SECOND_LEVEL.contains(&t)) { 3 } else { 2 };
    let base = labels[labels.len().saturating_sub(keep)..].join(".");
    Some(match port {
        Some(p) => format!("{base}:{p}"),
        None => base,
    })
}

/// Whether `a` and `b` are sibling sites under `policy`.
pub fn siblings(a: &str, b: &str, policy: SiblingPolicy) -> bool {
    if a == b {
        return false;
    }
    match policy {
        SiblingPolicy::Off => false,
        SiblingPolicy::Strict => {
            registrable(a).filter(|r| registrable(b).as_ref() == Some(r)).is_some_and(|r| a == r || b == r)
        }
        SiblingPolicy::Auto => registrable(a).is_some_and(|r| registrable(b).as_deref() == Some(r.as_str())),
    }
}

/// How an inherited entry stands on the site that uses it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Standing {
    /// The source's revision when the last live check here passed.
    pub verified_rev: Option<i64>,
    /// Failures in a row here.
    pub failures: i64,
    /// Suppressed here.
    pub suppressed: bool,
}

/// An entry a site may use from a sibling.
#[derive(Debug, Clone)]
pub struct Inherited {
    /// The sibling it comes from.
    pub source: String,
    /// The source's revision now.
    pub source_rev: i64,
    /// The entry, as the source holds it.
    pub entry: Entry,
    /// How it stands here.
    pub standing: Standing,
}

impl Inherited {
    /// Whether a live check here still covers it (the source has not changed since).
    pub fn verified(&self) -> bool {
        self.standing.verified_rev == Some(self.source_rev)
    }
}

fn standing(c: &Connection, scope: &str, source: &str, id: &str) -> rusqlite::Result<Standing> {
    Ok(c.query_row(
        "SELECT verified_rev, consecutive_failures, suppressed FROM pks_inherited
         WHERE scope = ?1 AND source_scope = ?2 AND stable_id = ?3",
        params![scope, source, id],
        |r| {
            Ok(Standing {
                verified_rev: r.get(0)?,
                failures: r.get(1)?,
                suppressed: r.get::<_, i64>(2)? != 0,
            })
        },
    )
    .optional()?
    .unwrap_or_default())
}

/// The active entries of `scope`'s siblings that it has no entry of its own for, with how each
/// stands here (suppressed ones included: callers leave them out).
pub fn inheritable(c: &Connection, scope: &str, policy: SiblingPolicy) -> rusqlite::Result<Vec<Inherited>> {
    if policy == SiblingPolicy::Off {
        return Ok(Vec::new());
    }
    let own: HashSet<String> = records::entries(c, scope)?.into_iter().map(|e| e.id.to_lowercase()).collect();
    let mut out = Vec::new();
    for d in records::domains(c)? {
        if !siblings(scope, &d.scope, policy) {
            continue;
        }
        for e in records::entries(c, &d.scope)? {
            if e.active() && !own.contains(&e.id.to_lowercase()) {
                let standing = standing(c, scope, &d.scope, &e.id)?;
                out.push(Inherited {
                    source: d.scope.clone(),
                    source_rev: d.content_rev,
                    entry: e,
                    standing,
                });
            }
        }
    }
    Ok(out)
}

/// The inherited entry `id` of `scope`, if one sibling holds it.
pub fn find(
    c: &Connection,
    scope: &str,
    id: &str,
    policy: SiblingPolicy,
) -> rusqlite::Result<Option<Inherited>> {
    Ok(inheritable(c, scope, policy)?.into_iter().find(|i| i.entry.id.eq_ignore_ascii_case(id)))
}

/// What happened to an inherited entry on the site that uses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The live check passed: its fingerprint is on this site's page.
    Checked,
    /// Its playbook worked here.
    Success,
    /// Its playbook failed here.
    Failure,
}

/// Records `event` for an inherited entry on `scope` and returns how it stands now: a live
/// check verifies it at the source's revision, a success clears its failures, a failure counts
/// towards suppression. The source is not touched.
pub fn record(
    c: &Connection,
    scope: &str,
    i: &Inherited,
    event: Event,
    now: i64,
) -> rusqlite::Result<Standing> {
    let s = standing(c, scope, &i.source, &i.entry.id)?;
    let (rev, failures) = match event {
        Event::Checked => (Some(i.source_rev), s.failures),
        Event::Success => (s.verified_rev, 0),
        Event::Failure => (s.verified_rev, s.failures + 1),
    };
    let suppressed = s.suppressed || failures >= SUPPRESS_AFTER;
    c.execute(
        "INSERT INTO pks_inherited (scope, source_scope, stable_id, verified_rev, consecutive_failures, suppressed, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (scope, source_scope, stable_id) DO UPDATE SET verified_rev = ?4, consecutive_failures = ?5,
             suppressed = ?6, updated_at = ?7",
        params![scope, i.source, i.entry.id, rev, failures, suppressed as i64, now],
    )?;
    Ok(Standing { verified_rev: rev, failures, suppressed })
}

/// The registrable domains whose one live check this session has used.
#[derive(Default)]
pub struct Checks(Mutex<HashSet<String>>);

impl Checks {
    /// Takes the one live check of `scope`'s registrable domain for this session; false when it
    /// was used already.
    pub fn take(&self, scope: &str) -> bool {
        let key = registrable(scope).unwrap_or_else(|| scope.to_owned());
        self.0.lock().unwrap_or_else(|p| p.into_inner()).insert(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn siblings_share_a_registrable_domain_and_port() {
        assert_eq!(registrable("shop.example.co.uk:8443").as_deref(), Some("example.co.uk:8443"));
        assert_eq!(registrable("www.example.com").as_deref(), Some("example.com"));
        assert_eq!(registrable("127.0.0.1:8080"), None);
        assert!(siblings("shop.example.com", "www.example.com", SiblingPolicy::Auto));
        assert!(!siblings("shop.example.com", "mail.example.com", SiblingPolicy::Strict));
        assert!(siblings("example.com", "shop.example.com", SiblingPolicy::Strict));
        assert!(!siblings("example.com", "shop.example.com", SiblingPolicy::Off));
        assert!(!siblings("a.example.com:1", "b.example.com:2", SiblingPolicy::Auto), "another port");
        assert!(!siblings("example.com", "example.org", SiblingPolicy::Auto));
        assert!(!siblings("a.co.uk", "b.co.uk", SiblingPolicy::Auto), "different registrations");
        let c = Checks::default();
        assert!(c.take("a.example.com") && !c.take("b.example.com") && c.take("example.org"));
    }
}
