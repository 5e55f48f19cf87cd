//! Who is connected (MCP sessions, their agents) and the live activity feed the popup shows.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Mutex;

use nova_shared::ui::Activity;
use serde_json::Value;

/// How many calls the activity feed keeps.
const FEED_LEN: usize = 40;

#[derive(Debug, Default, Clone)]
pub(crate) struct Seen {
    pub(crate) client: String,
    pub(crate) agents: BTreeSet<String>,
    pub(crate) calls: u64,
    pub(crate) last_call_at_ms: i64,
}

/// Connected MCP sessions and the latest calls.
#[derive(Debug, Default)]
pub struct Presence {
    sessions: Mutex<BTreeMap<String, Seen>>,
    feed: Mutex<VecDeque<Activity>>,
}

impl Presence {
    /// A session connected.
    pub fn join(&self, session: &str) {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).entry(session.to_owned()).or_default();
    }

    /// A session ended.
    pub fn leave(&self, session: &str) {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner()).remove(session);
    }

    /// The client named itself at `initialize`.
    pub fn named(&self, session: &str, client: &str) {
        let mut s = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        s.entry(session.to_owned()).or_default().client = client.to_owned();
    }

    /// A call finished: counts it for its session and puts it on the feed.
    pub fn called(&self, session: &str, line: Activity) {
        {
            let mut s = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
            let seen = s.entry(session.to_owned()).or_default();
            seen.agents.insert(line.agent_id.clone());
            seen.calls += 1;
            seen.last_call_at_ms = line.at_ms;
        }
        let mut feed = self.feed.lock().unwrap_or_else(|p| p.into_inner());
        feed.push_front(line);
        feed.truncate(FEED_LEN);
    }

    pub(crate) fn agents(&self) -> Vec<(String, Seen)> {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub(crate) fn feed(&self) -> Vec<Activity> {
        self.feed.lock().unwrap_or_else(|p| p.into_inner()).iter().cloned().collect()
    }
}

/// The feed line of a finished call.
pub fn activity(obs: &crate::observation::Observation, structured: Option<&Value>) -> Activity {
    use crate::observation::Outcome;
    let verification = structured
        .and_then(|s| s.pointer("/guardedCommit/verificationStatus").or_else(|| s.get("verificationStatus")))
        .and_then(Value::as_str);
    let badge = match (obs.outcome, verification) {
        (Some(Outcome::BlockedPreflight), _) => "blocked",
        (_, Some("verified_success")) => "verified",
        (_, Some("verified_fail")) => "failed",
        (_, Some("pending")) => "pending",
        (_, Some(_)) => "unverified",
        _ if obs.ok => "ok",
        _ => "error",
    };
    Activity {
        at_ms: obs.started_at_ms,
        agent_id: obs.agent_id.clone(),
        tool: obs.tool.clone(),
        target_id: obs.target_id.clone(),
        url: obs.url_after.clone().or_else(|| obs.url_before.clone()),
        badge: badge.to_owned(),
        reason_code: obs.reason_code.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feed_keeps_the_latest_calls_newest_first() {
        let p = Presence::default();
        p.join("s1");
        for i in 0..(FEED_LEN as i64 + 5) {
            p.called(
                "s1",
                Activity { at_ms: i, agent_id: "a".into(), tool: "t".into(), ..Default::default() },
            );
        }
        let feed = p.feed();
        assert_eq!(feed.len(), FEED_LEN);
        assert_eq!(feed[0].at_ms, FEED_LEN as i64 + 4);
        assert_eq!(p.agents()[0].1.calls, FEED_LEN as u64 + 5);
        p.leave("s1");
        assert!(p.agents().is_empty());
    }
}
