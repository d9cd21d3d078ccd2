-- Runs that may hold dates, with what tells whether their holder is still there: a
-- running run is alive while its session holds its advisory lock (hold_run.sql),
-- whichever machine it runs on; a lease is judged by the server's clock. Also a run
-- that has ended (released, finished) but still holds a date: one whose transaction was
-- in flight when it was released (releasable_of_run.sql), or a worker's whose session
-- broke; its session tells as for a running run. Only the run's own exclusive lock
-- counts: a worker's liveness check (run_alive.sql) takes the key shared for a moment.
SELECT r.run_id, r.status, r.host, r.pid, r.pid_started,
       (SELECT max(v.expires_at) FROM reservations v WHERE v.run_id = r.run_id) AS lease_until,
       (SELECT count(*) FROM reservations v WHERE v.run_id = r.run_id AND v.expires_at IS NULL) AS unexpiring,
       coalesce((SELECT max(v.expires_at) FROM reservations v WHERE v.run_id = r.run_id) < now(), false) AS lease_expired,
       EXISTS (SELECT 1 FROM pg_locks AS l
                WHERE l.locktype = 'advisory'
                  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                  AND l.classid = CAST(CAST(current_schema() AS regnamespace) AS oid)
                  AND l.objid = CAST(r.run_id AS oid)
                  AND l.objsubid = 2
                  AND l.mode = 'ExclusiveLock'
                  AND l.granted) AS session_alive
FROM runs r
WHERE r.status IN ('reserved', 'running')
   OR EXISTS (SELECT 1 FROM reservations AS v WHERE v.run_id = r.run_id)
ORDER BY r.run_id
