-- A run ends. Only a run still marked running: one a later run found dead and
-- marked interrupted, or one released from outside, keeps that status.
UPDATE runs
SET status = :status, finished_at = CURRENT_TIMESTAMP, error = coalesce(:error, error)
WHERE run_id = :run_id AND status = 'running'
