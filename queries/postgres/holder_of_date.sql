-- Fencing: a date's transaction locks the date's reservation row before it writes and
-- checks that it is still this run's. A reclaim or release waits for it, and a runner
-- whose session ended never gets here again.
-- holder_alive: whether the holder's own session (the one that took hold_run.sql's lock)
-- still lives. The workers of `apply --jobs` write through sessions of their own: once
-- the run's session is gone the run is dead (live_runs.sql), and they write no more dates.
SELECT r.run_id,
       EXISTS (SELECT 1 FROM pg_locks AS l
                WHERE l.locktype = 'advisory'
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = CAST(CAST(current_schema() AS regnamespace) AS oid)
                  AND l.objid = CAST(r.run_id AS oid)
                  AND l.objsubid = 2
                  AND l.granted) AS holder_alive
FROM reservations AS r
WHERE r.ds = :ds
FOR UPDATE OF r
