-- Daily rollups of the learning journal (docs/learning.md, "Retention"): what retention prunes
-- from the hot tables is kept here as counts, permanently.

CREATE TABLE lcj_rollups (
    day          TEXT    NOT NULL,
    context_host TEXT    NOT NULL,
    tool_name    TEXT    NOT NULL,
    events       INTEGER NOT NULL DEFAULT 0,
    failures     INTEGER NOT NULL DEFAULT 0,
    observations INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (day, context_host, tool_name)
);
