-- `sqlrun release`: the run will not compute anything more.
UPDATE runs
SET status = 'released', finished_at = CURRENT_TIMESTAMP
WHERE run_id = :run_id AND status IN ('reserved', 'running')
