-- The dates the state store knows of, for `status` without --interval.
SELECT min(ds), max(ds) FROM (
    SELECT min(ds) AS ds FROM run_partitions UNION ALL SELECT max(ds) FROM run_partitions
    UNION ALL SELECT min(ds) FROM reservations UNION ALL SELECT max(ds) FROM reservations
)
