-- OK (operational knowledge): what Nova believes is true right now in each tab and service
-- (docs/ok.md). Observations are append-only; facts keep their history: exactly one current row
-- (valid_to IS NULL) per scope and key.

CREATE TABLE ok_observations (
    id              INTEGER PRIMARY KEY,
    observed_at     INTEGER NOT NULL,
    scope_ref       TEXT    NOT NULL,
    target_id       TEXT    NOT NULL,
    service_key     TEXT,
    url             TEXT,
    perception_id   TEXT,
    agent_id        TEXT,
    signal_key      TEXT    NOT NULL,
    value_json      TEXT    NOT NULL,
    certainty_level TEXT    NOT NULL,
    confidence      REAL    NOT NULL,
    source_kind     TEXT    NOT NULL CHECK (source_kind IN ('agent', 'system')),
    evidence        TEXT,
    outcome         TEXT    NOT NULL,
    fact_id         INTEGER
);
CREATE INDEX ok_observations_time ON ok_observations (observed_at);
CREATE INDEX ok_observations_scope ON ok_observations (scope_ref, signal_key);

CREATE TRIGGER ok_observations_append_only_update BEFORE UPDATE ON ok_observations
BEGIN SELECT RAISE(ABORT, 'ok_observations are append-only'); END;
CREATE TRIGGER ok_observations_append_only_delete BEFORE DELETE ON ok_observations
BEGIN SELECT RAISE(ABORT, 'ok_observations are append-only'); END;

CREATE TABLE ok_facts (
    id                    INTEGER PRIMARY KEY,
    scope_ref             TEXT    NOT NULL,
    fact_key              TEXT    NOT NULL,
    value_json            TEXT    NOT NULL,
    value_type            TEXT    NOT NULL,
    fact_state            TEXT    NOT NULL DEFAULT 'fresh',
    confidence            REAL    NOT NULL,
    support_count         INTEGER NOT NULL DEFAULT 1,
    contradiction_count   INTEGER NOT NULL DEFAULT 0,
    certainty_level       TEXT    NOT NULL DEFAULT 'likely',
    source_kind           TEXT    NOT NULL CHECK (source_kind IN ('agent', 'system')),
    target_id             TEXT    NOT NULL,
    url                   TEXT,
    valid_from            INTEGER NOT NULL,
    valid_to              INTEGER,
    superseded_by_fact_id INTEGER REFERENCES ok_facts (id),
    first_observed_at     INTEGER NOT NULL,
    last_observed_at      INTEGER NOT NULL,
    last_verified_at      INTEGER,
    content_rev           INTEGER NOT NULL DEFAULT 1
);
CREATE UNIQUE INDEX ok_facts_current ON ok_facts (scope_ref, fact_key) WHERE valid_to IS NULL;

-- Scopes: target:{tab}, service:{key}, binding:{tab}@{service}, account:{fingerprint}. A change to
-- a scope's facts bumps its content_rev and its parent's.
CREATE TABLE ok_scopes (
    scope_ref   TEXT    PRIMARY KEY,
    kind        TEXT    NOT NULL CHECK (kind IN ('target', 'service', 'binding', 'account')),
    parent_ref  TEXT,
    content_rev INTEGER NOT NULL DEFAULT 0,
    -- binding: the URL its target state was last observed at, and the account seen in it.
    last_url    TEXT,
    account_ref TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);
