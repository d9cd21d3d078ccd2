-- A date's transaction takes the pipeline's lock shared: dates of different runs may
-- commit side by side, but never in the middle of a bookkeeping step, so a reservation
-- is never released between the statements of another run's reserve.
SELECT pg_advisory_xact_lock_shared(hashtext('sqlrun ' || current_schema()))
