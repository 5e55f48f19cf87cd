-- Semantic learning opportunities (docs/learning.md, "Semantic learning"): a richer situation
-- seen on a site (a consent dialog, a sign-in wall, a risky repeat) that Nova asks the agent to
-- resolve, and how it was resolved.

CREATE TABLE lcj_semantic (
    -- sem:{kind}:{origin}:{fingerprint}
    opportunity_id TEXT    PRIMARY KEY,
    kind           TEXT    NOT NULL CHECK (kind IN ('consent_cmp', 'login_wall', 'risky_repeat')),
    origin         TEXT    NOT NULL,
    fingerprint    TEXT    NOT NULL,
    state          TEXT    NOT NULL CHECK (state IN ('prompted', 'warned', 'strict', 'resolved', 'deferred')),
    confidence     REAL    NOT NULL,
    reason         TEXT    NOT NULL,
    evidence_json  TEXT    NOT NULL,
    skeleton_json  TEXT,
    -- Calls on its site since it was prompted, unresolved: what escalates it.
    eligible_calls INTEGER NOT NULL DEFAULT 0,
    owner_id       TEXT,
    verdict        TEXT,
    verdict_reason TEXT,
    match_source   TEXT,
    resolved_at    INTEGER,
    summarized     INTEGER NOT NULL DEFAULT 0,
    created_at     INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL
);
CREATE INDEX lcj_semantic_origin ON lcj_semantic (origin, state);
