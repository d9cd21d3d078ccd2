-- A running run holds this lock on its session for its whole life: while the session
-- lives the run is alive, wherever it runs (live_runs.sql reads pg_locks). The key is
-- (the schema's oid, the run id): unique in the database, so runs of two pipelines in
-- two schemas never share one.
SELECT pg_try_advisory_lock(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer),
                            CAST(:run_id AS integer))
