-- What the prompt page shows and until when a pending prompt waits (nova.permission_prompt).
ALTER TABLE approvals ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE approvals ADD COLUMN expires_at_ms INTEGER;
CREATE INDEX approvals_time ON approvals (asked_at_ms);
