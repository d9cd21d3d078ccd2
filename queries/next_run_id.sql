-- The id the next run will most likely get, for SQL shown before a run exists.
SELECT coalesce(max(run_id), 0) + 1 AS run_id FROM runs
