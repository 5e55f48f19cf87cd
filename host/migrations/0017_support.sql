-- Support tooling (docs/support.md): the person's STOP and resume as a history (user_control
-- keeps only the current state), and the indexes `nova log` and `nova report` filter by, so that
-- a day of a store with a million calls answers in well under a second.
CREATE TABLE control_events (
    id      INTEGER PRIMARY KEY,
    kind    TEXT    NOT NULL CHECK (kind IN ('stop', 'resume')),
    by_whom TEXT    NOT NULL,             -- popup | cli
    at_ms   INTEGER NOT NULL
);
CREATE INDEX control_events_time ON control_events (at_ms);
CREATE INDEX observations_time ON observations (started_at_ms);
CREATE INDEX observations_agent ON observations (agent_id, started_at_ms);
CREATE INDEX transitions_call ON transitions (call_id);
CREATE INDEX transitions_time ON transitions (started_at_ms);
