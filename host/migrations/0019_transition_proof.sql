-- What proved a guarded transition's success (docs/cls.md, "Result"): the success assertions
-- that held as the verdict was reached, as JSON (`heldAssertions[]`: factKey, op, expected,
-- observed, passed, error). NULL on rows written before, and `[]` when nothing was proven.
ALTER TABLE transitions ADD COLUMN held_assertions TEXT;
