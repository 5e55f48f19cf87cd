-- ETM task memory, TUC URL coverage and TOB scopes (docs/tasks.md).

CREATE TABLE task_profiles (
    profile_id           TEXT PRIMARY KEY,
    task_type            TEXT NOT NULL,
    display_name         TEXT NOT NULL,
    domain               TEXT,
    platform             TEXT,
    goal                 TEXT NOT NULL,
    stable_guidance      TEXT NOT NULL DEFAULT '[]',
    mandatory_checks     TEXT NOT NULL DEFAULT '[]',
    completion_condition TEXT,
    known_exceptions     TEXT NOT NULL DEFAULT '[]',
    confidence           REAL NOT NULL DEFAULT 0.5,
    content_rev          INTEGER NOT NULL DEFAULT 1,
    usage_count          INTEGER NOT NULL DEFAULT 0,
    archived             INTEGER NOT NULL DEFAULT 0,
    created_at_ms        INTEGER NOT NULL,
    updated_at_ms        INTEGER NOT NULL
);

CREATE TABLE task_instances (
    instance_id             TEXT PRIMARY KEY,
    profile_id              TEXT,
    profile_rev_applied     INTEGER,
    instance_rev            INTEGER NOT NULL DEFAULT 0,
    effective_context_hash  TEXT NOT NULL,
    effective_context_json  TEXT NOT NULL,
    status                  TEXT NOT NULL CHECK (status IN ('pending', 'active', 'completed', 'aborted', 'failed')),
    discovery_state         TEXT NOT NULL CHECK (discovery_state IN ('unknown', 'partial', 'frozen')),
    agent_id                TEXT NOT NULL,
    target_url              TEXT,
    target_id               TEXT,
    declared_task_kind      TEXT,
    effective_task_kind     TEXT NOT NULL,
    coverage_schema_version INTEGER NOT NULL DEFAULT 1,
    resume_state            TEXT NOT NULL DEFAULT '{}',
    mandatory_checks_state  TEXT NOT NULL DEFAULT '{}',
    evidence_scope_id       TEXT,
    evidence_scope_reason   TEXT,
    evidence_snapshot       TEXT,
    scan_hint_fired         INTEGER NOT NULL DEFAULT 0,
    started_at_ms           INTEGER NOT NULL,
    last_activity_at_ms     INTEGER NOT NULL,
    completed_at_ms         INTEGER
);
CREATE INDEX task_instances_agent ON task_instances (agent_id, status, last_activity_at_ms);

CREATE TABLE task_units (
    instance_id               TEXT NOT NULL REFERENCES task_instances (instance_id),
    unit_key                  TEXT NOT NULL,
    unit_kind                 TEXT NOT NULL,
    status                    TEXT NOT NULL CHECK (status IN ('discovered', 'checked', 'excluded', 'blocked', 'failed')),
    reason                    TEXT,
    evidence_class            TEXT,
    coverage_kind             TEXT,
    url                       TEXT,
    url_normalized            TEXT,
    url_hash                  TEXT,
    group_id                  TEXT,
    source_kind               TEXT,
    excluded_at_ms            INTEGER,
    exclusion_reason          TEXT,
    exclusion_source          TEXT,
    checked_by_observation_id TEXT,
    position                  INTEGER NOT NULL,
    updated_at_ms             INTEGER NOT NULL,
    PRIMARY KEY (instance_id, unit_key)
);
CREATE INDEX task_units_url ON task_units (instance_id, url_hash);

CREATE TABLE task_findings (
    instance_id TEXT NOT NULL REFERENCES task_instances (instance_id),
    finding_key TEXT NOT NULL,
    detail      TEXT,
    at_ms       INTEGER NOT NULL,
    PRIMARY KEY (instance_id, finding_key)
);

-- Every mutation: idempotency by (instance, clientEventId), the stored result is replayed.
CREATE TABLE task_events (
    id              INTEGER PRIMARY KEY,
    instance_id     TEXT NOT NULL,
    client_event_id TEXT,
    kind            TEXT NOT NULL,
    rev_before      INTEGER,
    rev_after       INTEGER,
    delta_json      TEXT,
    result_json     TEXT,
    agent_id        TEXT,
    at_ms           INTEGER NOT NULL
);
CREATE UNIQUE INDEX task_events_client ON task_events (instance_id, client_event_id) WHERE client_event_id IS NOT NULL;

CREATE TABLE task_guidance_logs (
    guidance_log_id         TEXT PRIMARY KEY,
    profile_id              TEXT,
    instance_id             TEXT,
    normalized_hash         TEXT NOT NULL,
    guidance_kind           TEXT NOT NULL,
    payload                 TEXT NOT NULL,
    source_kind             TEXT NOT NULL,
    source_ref              TEXT,
    status                  TEXT NOT NULL CHECK (status IN ('logged', 'proposed', 'accepted', 'rejected', 'promoted')),
    occurrence_count        INTEGER NOT NULL DEFAULT 1,
    promoted_to_content_rev INTEGER,
    created_at_ms           INTEGER NOT NULL,
    updated_at_ms           INTEGER NOT NULL
);
CREATE INDEX task_guidance_profile ON task_guidance_logs (profile_id, guidance_kind, normalized_hash);

-- TOB scopes: one open scope per target; bound observations carry workflow_scope_id.
CREATE TABLE tob_scopes (
    scope_id           TEXT PRIMARY KEY,
    kind               TEXT NOT NULL CHECK (kind IN ('instance', 'lease')),
    instance_id        TEXT,
    target_id          TEXT NOT NULL,
    agent_id           TEXT NOT NULL,
    state              TEXT NOT NULL CHECK (state IN ('open', 'active', 'closing', 'flushing', 'closed', 'faulted')),
    opened_at_ms       INTEGER NOT NULL,
    closing_at_ms      INTEGER,
    barrier_seq        INTEGER,
    closed_at_ms       INTEGER,
    ingestion_complete INTEGER,
    fault_reason       TEXT
);
CREATE INDEX tob_scopes_target ON tob_scopes (target_id, state);

ALTER TABLE observations ADD COLUMN binding_mode TEXT;   -- live | prelude_backfill | epilogue_grace
ALTER TABLE observations ADD COLUMN evidence_json TEXT;  -- coverage evidence of a registered scan
CREATE INDEX observations_scope ON observations (workflow_scope_id, seq);

-- TUC passive attribution (docs/tasks.md, "Attribution").
CREATE TABLE tuc_observations (
    observation_id        TEXT PRIMARY KEY,
    seq                   INTEGER,
    instance_id           TEXT,
    unit_key              TEXT,
    tool_name             TEXT NOT NULL,
    normalized_url        TEXT,
    normalized_url_hash   TEXT,
    top_level_origin      TEXT,
    evidence_kind         TEXT NOT NULL,
    evidence_score        REAL NOT NULL,
    evidence_trusted      INTEGER NOT NULL,
    eligible_for_coverage INTEGER NOT NULL,
    eligibility_reason    TEXT NOT NULL,
    text_coverage_ratio   REAL,
    normalizer_version    INTEGER NOT NULL,
    created_at_ms         INTEGER NOT NULL
);
CREATE INDEX tuc_observations_instance ON tuc_observations (instance_id, created_at_ms);

CREATE TABLE tuc_reconcile_runs (
    run_id              TEXT PRIMARY KEY,
    instance_id         TEXT NOT NULL,
    dry_run             INTEGER NOT NULL,
    result              TEXT NOT NULL,
    last_observation_id TEXT,
    last_observation_at INTEGER,
    proposed_json       TEXT,
    at_ms               INTEGER NOT NULL
);
CREATE INDEX tuc_reconcile_instance ON tuc_reconcile_runs (instance_id, at_ms);

-- The crawler's site-URL index per scope domain (site_urls / crawler unit sources).
CREATE TABLE site_urls (
    scope_domain  TEXT NOT NULL,
    url           TEXT NOT NULL,
    url_hash      TEXT NOT NULL,
    source        TEXT NOT NULL,
    discovered_at INTEGER NOT NULL,
    PRIMARY KEY (scope_domain, url_hash)
);

-- Tab leases survive hub restarts.
CREATE TABLE tab_leases (
    target_id     TEXT PRIMARY KEY,
    agent_id      TEXT NOT NULL,
    agent_role    TEXT,
    debug_label   TEXT,
    claimed_at_ms INTEGER NOT NULL,
    expires_at_ms INTEGER NOT NULL
);

-- A goal links to the task instance its agent was running on the target when it was created.
ALTER TABLE goals ADD COLUMN linked_task_instance_id TEXT;
