-- The failed and skipped dates of every run from :oldest on, for where the runs list
-- says they are.
SELECT run_id, ds, status
FROM run_partitions
WHERE run_id >= :oldest AND status IN ('failed', 'skipped')
ORDER BY run_id, ds
