-- A run's skipped dates with who holds them, for the report on stderr. The holder may
-- have finished the date and released it by the time the report is written: then its
-- run's start (else its creation) says since when it held it, not a `?`.
SELECT p.ds, p.held_by, h.kind AS holder_kind, h.requested_by AS holder_by,
       h.status AS holder_status, coalesce(v.reserved_at, h.started_at, h.created_at) AS held_since
FROM run_partitions p
LEFT JOIN runs h ON h.run_id = p.held_by
LEFT JOIN reservations v ON v.ds = p.ds AND v.run_id = p.held_by
WHERE p.run_id = :run_id AND p.status = 'skipped'
ORDER BY p.ds
