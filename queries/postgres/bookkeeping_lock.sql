-- Bookkeeping transactions of one pipeline (reserve, reclaim, seal, release, the end of
-- a run) take this lock exclusively: they take turns, and no date's transaction runs
-- while one of them reads and changes the reservations (as SQLite's single writer).
-- Released at COMMIT or ROLLBACK; waits at most lock_timeout.
SELECT pg_advisory_xact_lock(hashtext('sqlrun ' || current_schema()))
