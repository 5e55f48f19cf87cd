-- PKS (per-site knowledge, docs/pks.md): how to operate a site, not what is on it. A domain
-- record per scope (a site), its phenomena (recognised by a fingerprint, resolved by a
-- playbook, with health and drift), and every reported outcome.

CREATE TABLE pks_domains (
    scope        TEXT    PRIMARY KEY,
    trust        TEXT    NOT NULL DEFAULT 'unknown' CHECK (trust IN ('unknown', 'low', 'medium', 'high')),
    context_json TEXT    NOT NULL DEFAULT '{}',
    content_rev  INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL
);

CREATE TABLE pks_phenomena (
    scope                 TEXT    NOT NULL REFERENCES pks_domains (scope),
    stable_id             TEXT    NOT NULL,
    kind                  TEXT    NOT NULL,
    learning_level        TEXT    NOT NULL CHECK (learning_level IN ('L0', 'L1', 'L2')),
    origin                TEXT    NOT NULL,
    fingerprint_json      TEXT    NOT NULL,
    playbook_json         TEXT    NOT NULL,
    context_json          TEXT    NOT NULL DEFAULT '{}',
    -- The fingerprint's signals as first stored: drift is measured against them.
    baseline_json         TEXT    NOT NULL,
    drift_debt            REAL    NOT NULL DEFAULT 0,
    deprecated            INTEGER NOT NULL DEFAULT 0,
    deprecated_reason     TEXT,
    total_attempts        INTEGER NOT NULL DEFAULT 0,
    success_count         INTEGER NOT NULL DEFAULT 0,
    failure_count         INTEGER NOT NULL DEFAULT 0,
    consecutive_failures  INTEGER NOT NULL DEFAULT 0,
    consecutive_successes INTEGER NOT NULL DEFAULT 0,
    last_outcome          TEXT,
    last_attempt_at       INTEGER,
    created_at            INTEGER NOT NULL,
    updated_at            INTEGER NOT NULL,
    PRIMARY KEY (scope, stable_id)
);

CREATE TABLE pks_telemetry (
    id            INTEGER PRIMARY KEY,
    scope         TEXT    NOT NULL,
    stable_id     TEXT    NOT NULL,
    at            INTEGER NOT NULL,
    outcome       TEXT    NOT NULL CHECK (outcome IN ('success', 'failure', 'not_applicable')),
    elapsed_ms    INTEGER,
    target_id     TEXT,
    -- The MCP session that reported it: promotion asks for successes from more than one.
    session_id    TEXT,
    features_json TEXT
);
CREATE INDEX pks_telemetry_entry ON pks_telemetry (scope, stable_id, at);
