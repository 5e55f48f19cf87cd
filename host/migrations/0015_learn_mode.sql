-- Learn Mode tasks (docs/learning.md, "Learn Mode"): a tab an agent maps a platform in, from
-- `nova.get_instructions {mode: learn}` until the tab is released.

CREATE TABLE lcj_learn_tasks (
    task_id      TEXT    PRIMARY KEY,
    tab_id       TEXT    NOT NULL,
    owner_id     TEXT    NOT NULL,
    domain       TEXT    NOT NULL DEFAULT '',
    keywords     TEXT,
    started_at   INTEGER NOT NULL,
    ended_at     INTEGER,
    -- complete (the floors met), coverage_exhausted (released below them, with a reason)
    ended_how    TEXT,
    ended_reason TEXT
);
CREATE INDEX lcj_learn_tasks_tab ON lcj_learn_tasks (tab_id, owner_id, ended_at);
