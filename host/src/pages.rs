//! Pages the hub serves once over its loopback HTTP endpoint, for the person's own browser: the
//! activity report the settings page opens (docs/support.md). A browser tab cannot send the
//! bearer token, so a random ticket in the URL stands for it: 128 bits, good for one request
//! within [`TICKET_TTL_MS`], then gone.

use std::collections::HashMap;
use std::sync::Mutex;

use rand::RngCore as _;

/// How long a ticket stays good.
pub const TICKET_TTL_MS: i64 = 60_000;
/// Path prefix of the pages on the HTTP endpoint.
pub const PATH: &str = "/page/";
/// At most this many pages wait at once (each is a whole report).
const MAX_WAITING: usize = 4;

/// Pages waiting to be fetched, by ticket.
#[derive(Default)]
pub struct OneTimePages {
    base: Mutex<Option<String>>,
    waiting: Mutex<HashMap<String, (i64, String)>>,
}

impl OneTimePages {
    /// Sets the endpoint's origin (`http://127.0.0.1:PORT`), once it is bound.
    pub fn set_base(&self, origin: String) {
        *self.base.lock().unwrap_or_else(|p| p.into_inner()) = Some(origin);
    }

    /// Keeps `html` for one fetch; the URL to open, or `None` when the endpoint is not up.
    pub fn offer(&self, html: String, now_ms: i64) -> Option<String> {
        let base = self.base.lock().unwrap_or_else(|p| p.into_inner()).clone()?;
        let mut bytes = [0u8; 16];
        rand::rng().fill_bytes(&mut bytes);
        let ticket: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        waiting.retain(|_, (at, _)| now_ms - *at < TICKET_TTL_MS);
        while waiting.len() >= MAX_WAITING {
            let oldest = waiting.iter().min_by_key(|(_, (at, _))| *at).map(|(t, _)| t.clone());
            match oldest {
                Some(t) => waiting.remove(&t),
                None => break,
            };
        }
        waiting.insert(ticket.clone(), (now_ms, html));
        Some(format!("{base}{PATH}{ticket}"))
    }

    /// The page for `ticket`, once, if it has not expired.
    pub fn take(&self, ticket: &str, now_ms: i64) -> Option<String> {
        let mut waiting = self.waiting.lock().unwrap_or_else(|p| p.into_inner());
        let (at, html) = waiting.remove(ticket)?;
        (now_ms - at < TICKET_TTL_MS).then_some(html)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_served_once_and_only_in_time() {
        let pages = OneTimePages::default();
        assert_eq!(pages.offer("x".into(), 0), None, "no endpoint yet");
        pages.set_base("http://127.0.0.1:9".into());
        let url = pages.offer("<p>hi</p>".into(), 1000).expect("url");
        let ticket = url.rsplit('/').next().expect("ticket").to_owned();
        assert_eq!(ticket.len(), 32);
        assert!(url.starts_with("http://127.0.0.1:9/page/"));
        assert_eq!(pages.take("nope", 1000), None);
        assert_eq!(pages.take(&ticket, 2000).as_deref(), Some("<p>hi</p>"));
        assert_eq!(pages.take(&ticket, 2000), None, "used once");
        let late = pages.offer("late".into(), 0).expect("url");
        let late = late.rsplit('/').next().expect("ticket");
        assert_eq!(pages.take(late, TICKET_TTL_MS), None, "expired");
    }
}
