-- The seal events on a run's dates since it was made: what sent (seal, reissue) or
-- unsealed the values it built, each with the first and last of its dates and how many.
SELECT e.seal_id, e.action, e.made_by, e.made_at, e.reason,
       min(c.ds) AS first_ds, max(c.ds) AS last_ds, count(DISTINCT c.ds) AS dates
FROM seal_events e
JOIN seal_coverage c ON c.seal_id = e.seal_id
JOIN run_partitions p ON p.ds = c.ds AND p.run_id = :run_id
                     AND p.status IN ('success', 'corrected', 'unchanged')
WHERE e.made_at >= (SELECT r.created_at FROM runs r WHERE r.run_id = :run_id)
GROUP BY e.seal_id, e.action, e.made_by, e.made_at, e.reason
ORDER BY e.seal_id
