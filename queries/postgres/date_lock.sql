-- A date's transaction takes the pipeline's lock (bookkeeping_lock.sql) shared: dates of
-- different runs may commit side by side, but never in the middle of a bookkeeping step,
-- so a reservation is never released between the statements of another run's reserve.
SELECT pg_advisory_xact_lock_shared(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), 0)
