-- Bookkeeping transactions of one pipeline (reserve, reclaim, seal, finish) take
-- turns, as SQLite's single writer does; released at COMMIT or ROLLBACK. Waits at most
-- lock_timeout.
SELECT pg_advisory_xact_lock(hashtext('sqlrun ' || current_schema()))
