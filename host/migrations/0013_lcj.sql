-- LCJ, the learning candidate journal (docs/learning.md): one tool event per call, the
-- candidate claims those events raise, observations attributed to sites and phenomena, and the
-- audit of every learning-level transition. The promotion gates read only this evidence.

CREATE TABLE lcj_tool_events (
    event_id            INTEGER PRIMARY KEY,
    call_id             TEXT,
    task_id             TEXT,
    tab_id              TEXT,
    owner_id            TEXT    NOT NULL,
    tool_name           TEXT    NOT NULL,
    success             INTEGER NOT NULL CHECK (success IN (0, 1)),
    duration_ms         INTEGER NOT NULL,
    error_text          TEXT,
    context_host        TEXT    NOT NULL DEFAULT '',
    args_summary        TEXT,
    activity_session_id TEXT    NOT NULL,
    created_at          INTEGER NOT NULL
);
CREATE INDEX lcj_events_at ON lcj_tool_events (created_at);
CREATE INDEX lcj_events_cursor ON lcj_tool_events (owner_id, context_host, created_at);

CREATE TABLE lcj_candidates (
    candidate_id        INTEGER PRIMARY KEY,
    owner_id            TEXT    NOT NULL,
    context_host        TEXT    NOT NULL DEFAULT '',
    tab_id              TEXT,
    task_id             TEXT,
    component           TEXT    NOT NULL,
    claim               TEXT    NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN ('unverified', 'verified', 'disproven')),
    confidence          REAL    NOT NULL CHECK (confidence >= 0 AND confidence <= 1),
    -- diagnostic (a failure: never promoted), semantic (an agent's claim), write (a successful
    -- knowledge write or sequence), generated (nova.learn_generate).
    origin              TEXT    NOT NULL CHECK (origin IN ('diagnostic', 'semantic', 'write', 'generated')),
    source_event_id     INTEGER,
    resolution_event_id INTEGER,
    candidate_key       TEXT    NOT NULL,
    fingerprint_hash    TEXT    NOT NULL,
    stable_id           TEXT    NOT NULL,
    candidate_level     INTEGER NOT NULL DEFAULT 0,
    verified_at         INTEGER,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL
);
-- One open (not disproven) candidate per owner, host and key; later writes merge into it.
CREATE UNIQUE INDEX lcj_candidates_open ON lcj_candidates (owner_id, context_host, candidate_key)
    WHERE status <> 'disproven';
CREATE INDEX lcj_candidates_key ON lcj_candidates (context_host, candidate_key);

CREATE TABLE lcj_observations (
    observation_id      INTEGER PRIMARY KEY,
    event_id            INTEGER,
    kind                TEXT    NOT NULL,
    outcome             INTEGER NOT NULL CHECK (outcome IN (-1, 0, 1)),
    severity            INTEGER NOT NULL CHECK (severity IN (0, 1, 2)),
    context_host        TEXT    NOT NULL,
    tab_id              TEXT,
    owner_id            TEXT    NOT NULL,
    activity_session_id TEXT    NOT NULL,
    tool_name           TEXT    NOT NULL,
    target_stable_id    TEXT,
    candidate_key       TEXT,
    selector_norm       TEXT,
    fingerprint_hash    TEXT,
    payload_json        TEXT,
    throttle_key        TEXT    NOT NULL,
    dispatch_call_id    TEXT,
    dispatch_seq        INTEGER,
    source_scope        TEXT,
    created_at          INTEGER NOT NULL
);
CREATE INDEX lcj_observations_host ON lcj_observations (context_host, created_at);

CREATE TABLE lcj_audit (
    audit_id     INTEGER PRIMARY KEY,
    stable_id    TEXT    NOT NULL,
    context_host TEXT    NOT NULL,
    from_level   TEXT    NOT NULL,
    to_level     TEXT    NOT NULL,
    reason_kind  TEXT    NOT NULL,
    reason_json  TEXT    NOT NULL,
    owner_id     TEXT,
    created_at   INTEGER NOT NULL
);
CREATE INDEX lcj_audit_host ON lcj_audit (context_host, created_at);

-- The candidate an entry grew from (learn_generate), and when it was retired (revival needs
-- evidence from after that).
ALTER TABLE pks_phenomena ADD COLUMN candidate_key TEXT;
ALTER TABLE pks_phenomena ADD COLUMN deprecated_at INTEGER;
