-- CLS closed-loop goals: a durable objective on a target with an ordered step plan.
CREATE TABLE goals (
    goal_id            TEXT PRIMARY KEY,
    target_id          TEXT NOT NULL,
    summary            TEXT NOT NULL,
    mode               TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN ('active', 'completed', 'failed', 'aborted', 'orphaned')),
    owner_agent_id     TEXT,
    sidecar_session_id TEXT,
    lease_ms           INTEGER NOT NULL,
    lease_expires_at_ms INTEGER NOT NULL,
    heartbeat_at_ms    INTEGER NOT NULL,
    current_step       INTEGER NOT NULL DEFAULT 0,
    contract_revision  INTEGER NOT NULL DEFAULT 1,
    preconditions_json TEXT,
    created_at_ms      INTEGER NOT NULL,
    updated_at_ms      INTEGER NOT NULL
);
CREATE INDEX goals_target_state ON goals (target_id, state);

CREATE TABLE goal_steps (
    goal_id       TEXT NOT NULL REFERENCES goals (goal_id),
    idx           INTEGER NOT NULL,
    action_desc   TEXT NOT NULL,
    contract_json TEXT,
    status        TEXT NOT NULL CHECK (status IN ('planned', 'ready', 'blocked', 'dispatched', 'verifying', 'done', 'ambiguous', 'failed', 'aborted')),
    transition_id TEXT,
    updated_at_ms INTEGER NOT NULL,
    PRIMARY KEY (goal_id, idx)
);

CREATE TABLE goal_events (
    id       INTEGER PRIMARY KEY,
    goal_id  TEXT NOT NULL REFERENCES goals (goal_id),
    at_ms    INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    source   TEXT NOT NULL,
    content  TEXT
);
CREATE INDEX goal_events_goal ON goal_events (goal_id, id);
