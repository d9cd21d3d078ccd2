-- A bookkeeping transaction of one pipeline (reserve, reclaim, seal, release, the end of
-- a run, creating the pipeline's objects) begins: the steps take turns through this
-- transaction-level advisory lock, as SQLite's single writer, so that no step reads the
-- reservations while another changes them. Key: (the schema's oid, 0); run ids start at
-- 1. Released at COMMIT or ROLLBACK. Dates never take it (see Conn::begin).
--
-- Each step lasts milliseconds, so the bounds are sqlrun's own, whatever the session's
-- settings: a step waits at most 20 s for its turn (then exit 2, nothing written), and a
-- runner stopped inside a step (SIGSTOP, a paused VM) has its session ended by the server
-- after 10 s idle, which frees the turn and makes that run dead, so its dates are
-- reclaimed by the next writer.
BEGIN;
SET LOCAL lock_timeout = '20s';
SET LOCAL idle_in_transaction_session_timeout = '10s';
SELECT pg_advisory_xact_lock(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), 0);
