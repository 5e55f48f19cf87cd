-- What weakens a guarded transition's verdict (docs/cls.md, "Verdicts and their caveats"): a code
-- written after the verdict, NULL when nothing does. `post_back_unconfirmed`: a form posted back
-- to its own address with no success message, verified by the new page alone (the reply said
-- `verifyState: likely`).
ALTER TABLE transitions ADD COLUMN caveat TEXT;
