-- The dates a run holds that can be given up now (release, the end of a run). On SQLite
-- the caller holds the one write lock, so no date is in flight: all of them
-- (postgres/releasable_of_run.sql leaves out a date in flight).
SELECT ds FROM reservations WHERE run_id = :run_id ORDER BY ds
