-- A seal, reissue or unseal, before its work: the event its coverage, copies and
-- settled corrections name (system/seal.sql, system/unseal.sql).
INSERT INTO seal_events (action, first_ds, last_ds, made_at, made_by, reason)
VALUES (:action, :first, :last, CURRENT_TIMESTAMP, :by, :reason)
RETURNING seal_id
