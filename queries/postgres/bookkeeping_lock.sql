-- Bookkeeping transactions of one pipeline (reserve, reclaim, seal, release, the end of
-- a run) take this lock exclusively: they take turns, and no date's transaction runs
-- while one of them reads and changes the reservations (as SQLite's single writer).
-- Key: (the schema's oid, 0); run ids start at 1. Released at COMMIT or ROLLBACK;
-- waits at most lock_timeout.
SELECT pg_advisory_xact_lock(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), 0)
