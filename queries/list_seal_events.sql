-- The seal events, newest first: each seal, reissue and unseal with who, when and why,
-- and how many dates and models it covered.
SELECT e.seal_id, e.action, e.first_ds, e.last_ds, e.made_by, e.made_at, e.reason,
       (SELECT count(DISTINCT c.ds) FROM seal_coverage c WHERE c.seal_id = e.seal_id) AS dates,
       (SELECT count(DISTINCT c.model) FROM seal_coverage c WHERE c.seal_id = e.seal_id) AS models
FROM seal_events e
ORDER BY e.seal_id DESC
LIMIT :limit
