-- The person's controls (AAG): the emergency stop and handover notes, kept across restarts.
CREATE TABLE user_control (
    key           TEXT PRIMARY KEY,           -- 'emergency_stop'
    value         TEXT NOT NULL,              -- JSON
    updated_at_ms INTEGER NOT NULL
);

-- A reclaimed tab's message for the agent that lost it, delivered once by
-- claim.reclaim_notification.
CREATE TABLE reclaim_notes (
    target_id  TEXT NOT NULL,
    agent_id   TEXT NOT NULL,                 -- who lost the tab
    by_agent   TEXT NOT NULL,
    reason     TEXT NOT NULL,
    at_ms      INTEGER NOT NULL,
    PRIMARY KEY (target_id, agent_id)
);

-- Decisions of nova.permission_prompt.
CREATE TABLE approvals (
    prompt_id   TEXT PRIMARY KEY,
    agent_id    TEXT NOT NULL,
    target_id   TEXT,
    question    TEXT NOT NULL,
    decision    TEXT NOT NULL CHECK (decision IN ('pending', 'approved', 'denied', 'timed_out')),
    asked_at_ms INTEGER NOT NULL,
    decided_at_ms INTEGER
);
