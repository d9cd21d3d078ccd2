-- A date's transaction takes the pipeline's lock (bookkeeping_lock.sql) shared: dates of
-- different runs may commit side by side, but never in the middle of a bookkeeping step,
-- so a reservation is never released between the statements of another run's reserve.
-- Taken for the session just before the date's BEGIN (and released just after its end,
-- date_unlock.sql): the date's REPEATABLE READ snapshot is then taken with the lock held,
-- so no bookkeeping step can commit between the snapshot and the date's writes.
SELECT pg_advisory_lock_shared(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), 0)
