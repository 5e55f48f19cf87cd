-- PKS sibling scopes (docs/pks.md, "Sibling sites"): entries a site uses from a sibling site (the
-- same registrable domain), with their own verification and failures there. The source site's
-- entry and its health are never touched by what happens on the site that inherits it.

CREATE TABLE pks_inherited (
    scope                TEXT    NOT NULL,
    source_scope         TEXT    NOT NULL,
    stable_id            TEXT    NOT NULL,
    -- The source's content_rev when a live check on this site last passed; NULL: never.
    verified_rev         INTEGER,
    consecutive_failures INTEGER NOT NULL DEFAULT 0,
    suppressed           INTEGER NOT NULL DEFAULT 0,
    updated_at           INTEGER NOT NULL,
    PRIMARY KEY (scope, source_scope, stable_id)
);
