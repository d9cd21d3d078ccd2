-- `sqlrun undo RUN`: each partition RUN replaced (replaced_partitions: the retention has
-- not pruned it) from :first to :last, how many rows it replaced there, and the run whose
-- rows the partition holds now (partition_models; NULL: none recorded).
SELECT r.ds, r.model, r.row_count, pm.run_id AS holder
FROM replaced_partitions AS r
LEFT JOIN partition_models AS pm ON pm.ds = r.ds AND pm.model = r.model
WHERE r.replaced_by = :run_id AND r.ds >= :first AND r.ds <= :last
ORDER BY r.ds, r.model
