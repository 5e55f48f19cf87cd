-- AAG decisions that let a call run: the gates that warned, would have blocked (shadow_block)
-- or were bypassed (`_meta.forceBypass`) on this call, as a JSON object
-- {"<gateId>": "warned" | "would_block" | "bypassed"}. NULL when no gate spoke. Blocked calls
-- keep using outcome_kind = blocked_preflight and error_code = aag_blocked:<gateId>.
ALTER TABLE observations ADD COLUMN aag_gates TEXT;
