SELECT ds, status, held_by, error, started_at, finished_at
FROM run_partitions
WHERE run_id = :run_id
ORDER BY ds
