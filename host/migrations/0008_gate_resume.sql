-- What the gates know of an agent session that must outlive a hub restart: the bundles it
-- loaded, the documents it perceived (tab -> navigation epoch and URL), the active tab it last
-- saw, its task lookups. Keyed by the session id `nova mcp` names to the hub (the relay keeps
-- the agent's session across hub restarts). Rows unused for a day are pruned at hub start.
CREATE TABLE gate_sessions (
    session_key TEXT PRIMARY KEY,
    state_json TEXT NOT NULL,
    updated_at_ms INTEGER NOT NULL
);

-- Identity overlays (sign-in, payment) seen by a perceive, bound to the document (navigation
-- epoch) they were seen on; they hold mutating calls on that document until a perceive no
-- longer sees them or the person approves. Kept so that a hub restart does not lift them.
CREATE TABLE tab_overlays (
    target_id TEXT PRIMARY KEY,
    nav_epoch INTEGER NOT NULL,
    overlay_json TEXT NOT NULL,
    seen_at_ms INTEGER NOT NULL
);
