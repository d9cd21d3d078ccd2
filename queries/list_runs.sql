-- The audit trail, newest first, with how many of each run's dates ended each way
-- (`done` = success, corrected and unchanged together).
SELECT r.run_id, r.kind, r.interval_start, r.interval_end, r.requested_by, r.reason,
       r.status, r.created_at, r.started_at, r.finished_at,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status IN ('success', 'corrected', 'unchanged')) AS done,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status = 'success') AS success,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status = 'corrected') AS corrected,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status = 'unchanged') AS unchanged,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status = 'skipped') AS skipped,
       (SELECT count(*) FROM run_partitions p WHERE p.run_id = r.run_id AND p.status = 'failed') AS failed,
       (SELECT count(*) FROM reservations v WHERE v.run_id = r.run_id) AS holding
FROM runs r
ORDER BY r.run_id DESC
LIMIT :limit
