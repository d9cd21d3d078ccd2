-- A running run holds this lock on its session for its whole life: while the session
-- lives the run is alive, wherever it runs (live_runs.sql reads pg_locks).
SELECT pg_try_advisory_lock(hashtext(current_schema()) & 2147483647, CAST(:run_id AS integer))
