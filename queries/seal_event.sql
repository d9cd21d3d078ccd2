-- One seal event, by id.
SELECT seal_id, action, first_ds, last_ds, made_at, made_by, reason
FROM seal_events
WHERE seal_id = :seal_id
