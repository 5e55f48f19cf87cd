-- CLS transition journal: one row per guarded transition, written BEFORE dispatch (intent)
-- with synchronous=FULL, then updated at dispatch and at the verdict. A hub that dies between
-- intent and verdict leaves the row in 'intent' or 'dispatched'; the next hub marks it
-- 'in_doubt' and reports it, and never dispatches it again.
CREATE TABLE transitions (
    transition_id        TEXT PRIMARY KEY,
    call_id              TEXT NOT NULL,
    tool                 TEXT NOT NULL,
    agent_id             TEXT NOT NULL,
    mcp_session          TEXT NOT NULL,
    target_id            TEXT NOT NULL,
    url_before           TEXT,
    action_kind          TEXT NOT NULL,
    retry_policy         TEXT NOT NULL,
    contract_json        TEXT NOT NULL,
    state                TEXT NOT NULL CHECK (state IN ('intent', 'dispatched', 'completed', 'blocked', 'in_doubt')),
    dispatch_status      TEXT,
    verification_status  TEXT,
    indeterminate_reason TEXT,
    retry_advice         TEXT,
    precondition_verdict TEXT,
    outcome_verdict      TEXT,
    failed_assertions    TEXT,
    hub_pid              INTEGER NOT NULL,
    started_at_ms        INTEGER NOT NULL,
    dispatched_at_ms     INTEGER,
    completed_at_ms      INTEGER
);
CREATE INDEX transitions_target ON transitions (target_id, started_at_ms);
CREATE INDEX transitions_state ON transitions (state);
