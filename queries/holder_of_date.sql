-- Fencing: which run holds the date, and whether that run is alive. On SQLite a run
-- computing dates is this very process, which is alive (the PostgreSQL version asks the
-- server).
SELECT run_id, 1 AS holder_alive FROM reservations WHERE ds = :ds
