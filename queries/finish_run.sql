-- A run ends. Only a run still marked running: one a later run found dead and
-- marked interrupted, or one released from outside, keeps that status. took_ms: how long
-- it took by the runner's monotonic clock (the times are whole seconds).
UPDATE runs
SET status = :status, finished_at = CURRENT_TIMESTAMP, error = coalesce(:error, error),
    took_ms = :took_ms
WHERE run_id = :run_id AND status = 'running'
