-- PKS domain hints (docs/pks.md, "Hints"): what agents note about operating a site that is not a
-- phenomenon with a playbook ("the search needs Enter", "sign-in lives at /account/login").
-- Never executed; shown with the site's knowledge.

CREATE TABLE pks_hints (
    scope      TEXT    NOT NULL REFERENCES pks_domains (scope),
    hint_key   TEXT    NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('navigation', 'timing', 'auth', 'layout', 'behavior', 'note')),
    text       TEXT    NOT NULL,
    routes_json TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (scope, hint_key)
);
