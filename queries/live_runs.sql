-- Runs that may hold dates, with what tells whether their holder is still there: on
-- SQLite the process (host, pid, start time) and the lease, judged by this clock.
SELECT r.run_id, r.status, r.host, r.pid, r.pid_started,
       (SELECT max(v.expires_at) FROM reservations v WHERE v.run_id = r.run_id) AS lease_until,
       (SELECT count(*) FROM reservations v WHERE v.run_id = r.run_id AND v.expires_at IS NULL) AS unexpiring,
       coalesce((SELECT max(v.expires_at) FROM reservations v WHERE v.run_id = r.run_id) < CURRENT_TIMESTAMP, 0) AS lease_expired,
       NULL AS session_alive
FROM runs r
WHERE r.status IN ('reserved', 'running')
ORDER BY r.run_id
