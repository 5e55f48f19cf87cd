-- TOB observation rows: one per tool call, blocked and failed calls included.
-- Column meanings: docs/tasks.md, "Evidence (TOB)" and "Signal flags".
CREATE TABLE observations (
    seq               INTEGER PRIMARY KEY,         -- dispatch_seq: monotonic across hub restarts
    call_id           TEXT NOT NULL UNIQUE,        -- dispatch_call_id (UUIDv4)
    request_id_short  TEXT NOT NULL,               -- first 8 hex digits of call_id, for logs
    tool              TEXT NOT NULL,
    agent_id          TEXT NOT NULL,
    mcp_session       TEXT NOT NULL,
    target_id         TEXT,                        -- resolved tab id; NULL when unresolved
    url_before        TEXT,
    url_after         TEXT,
    url_effective     TEXT,                        -- COALESCE(after, before)
    nav_epoch_before  INTEGER,
    nav_epoch_after   INTEGER,
    action_kind       TEXT NOT NULL CHECK (action_kind IN ('read','navigate','interact','write','meta')),
    surface           TEXT NOT NULL,               -- webpage | dom_node | tab | none
    signal_flags      INTEGER NOT NULL,            -- 64-bit mask, docs/tasks.md "Signal flags"
    ok                INTEGER NOT NULL,            -- logical success
    executed          INTEGER NOT NULL,            -- the call reached the browser
    outcome_kind      TEXT NOT NULL,               -- success | failed | blocked_preflight | invalid_params
    reason_code       TEXT,
    error_code        TEXT,
    block_stage       TEXT,                        -- e.g. aag_preflight, validation
    selector          TEXT,
    args_json         TEXT,                        -- arguments with typed text and secrets redacted
    started_at_ms     INTEGER NOT NULL,
    duration_ms       INTEGER NOT NULL,
    workflow_scope_id TEXT
);
CREATE INDEX observations_target_time ON observations (target_id, started_at_ms);
CREATE INDEX observations_session ON observations (mcp_session, seq);
CREATE INDEX observations_tool ON observations (tool, started_at_ms);
