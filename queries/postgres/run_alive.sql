-- Whether a run's own session (the one that took hold_run.sql's lock) still lives, asked
-- inside a date's transaction by another session of the run (a worker of `apply --jobs`):
-- a shared try fails at once while that session holds the lock. If it succeeds the run
-- is gone (the shared lock lasts until this transaction ends). Cheaper than reading
-- pg_locks, which copies the server's whole lock table.
SELECT NOT pg_try_advisory_xact_lock_shared(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer),
                                            CAST(:run_id AS integer))
