//! The Nova host: the hub the browser spawns (`nova native`), the MCP relay agents run
//! (`nova mcp`), and the installation commands.
//!
//! # Layout
//! - [`daemon`]: `nova native`: wires the bridge, the store and the MCP listeners together.
//! - [`hub`]: the hub's state, what every tool call can reach.
//! - [`registry`]: every tool, declared once next to its handler ([`tool!`]); all else reads it.
//! - [`dispatch`]: the call pipeline every tool call takes (gates, run, record evidence).
//! - [`call`]: what one call is made of: its record, reply, errors and argument parsing.
//! - [`tabs`]: resolving the tab a call names under the lease rules; [`replies`]: what the
//!   replies of page tools share.
//! - [`aag`]: the gates before every call, the person's controls (STOP, prompts, popup).
//! - [`bridge`]: native messaging to the extension (framing in [`bridge::codec`]), request
//!   correlation and timeouts, the browser's tab list and page stamps.
//! - [`browse`]: the browser tools (perceive, read, navigate, click, type, screenshot);
//!   [`pagetools`]: route, file upload, dismiss blockers, sequences.
//! - [`cls`]: guarded transitions: contracts, the journal, the coordinator, verdicts, goals.
//! - [`etm`]: task memory: profiles, runs, evidence grading, guidance; [`tuc`]: task URL
//!   coverage (units, scans, attribution).
//! - [`ok`]: operational knowledge: what is true right now in each tab and service (facts with
//!   freshness and conflicts, `okHints`, `nova.ok_observe`, `nova.ok_signal_schema`,
//!   `nova.memory_stats`).
//! - [`pks`]: per-site knowledge: how to operate a site (phenomena, playbooks, health).
//! - [`lcj`]: the learning journal every call feeds (events, candidates, observations);
//!   [`alp`]: learning from it, only through explainable gates (suggest, generate, promote,
//!   feedback, explain).
//! - [`lease`]: tab leases (`nova.tab_claim` / `nova.tab_release`).
//! - [`observation`]: one call's observation row (kind, flags, outcome); [`tob`]: the Tool
//!   Observation Bus, the rows' batched writer and scopes.
//! - [`store`]: the SQLite store, migrations and integrity checks; [`settings`]: the person's
//!   `settings.json`; [`preflight`]: a data dir or store Nova cannot use, refused with the fix.
//! - [`mcp`]: MCP server (rmcp), HTTP endpoint, stdio relay; translation only.
//! - [`install`], [`doctor`]: native-host manifests per browser and OS; health checks.
//! - [`support`]: for support staff: `nova log`, `nova report`, `nova bundle`, `nova store check`.
//! - [`ipc`]: the relay-to-hub channel (Unix socket; named pipe on Windows).
//! - [`adapters`]: the site adapters in the data dir (how pages of a site are read).
//! - [`pages`]: pages the hub serves once over HTTP (the activity report), by ticket.
//! - [`stages`]: where one call's time goes, for the callers that ask (`cargo xtask bench`).
//! - [`paths`]: the data dir and everything in it; [`time`]: the clock and ISO 8601;
//!   [`clock`]: the clock the memory judges time by (shiftable in tests);
//!   [`url`]: URL normalisation and parts (hosts, origins), for the gates, TUC and TOB;
//!   [`url_passwords`]: passwords in addresses, kept out of everything Nova keeps or reports.
//!
//! `docs/architecture.md` follows one call through these modules and says which may import
//! which (`cargo xtask deps` checks there is no loop).

#![warn(missing_docs)]

pub mod aag;
pub mod adapters;
pub mod alp;
pub mod bridge;
pub mod browse;
pub mod call;
pub mod clock;
pub mod cls;
pub mod daemon;
pub mod dispatch;
pub mod doctor;
pub mod etm;
pub mod hub;
pub mod install;
pub mod ipc;
pub mod lcj;
pub mod lease;
pub mod mcp;
pub mod observation;
pub mod ok;
pub mod pages;
pub mod pagetools;
pub mod paths;
pub mod pks;
pub mod preflight;
pub mod registry;
pub mod replies;
pub mod settings;
pub mod stages;
pub mod store;
pub mod support;
pub mod tabs;
pub mod time;
pub mod tob;
pub mod tuc;
pub mod url;
pub mod url_passwords;
