-- `sqlrun undo RUN`: the dates from :first to :last that RUN computed (success) or
-- corrected (sealed) but where it kept no replaced partition: the retention pruned their
-- history, or, sealed when RUN ran, they were corrected, never replaced.
SELECT p.ds, p.status
FROM run_partitions AS p
WHERE p.run_id = :run_id AND p.ds >= :first AND p.ds <= :last
  AND p.status IN ('success', 'corrected')
  AND NOT EXISTS (SELECT 1 FROM replaced_partitions AS r
                  WHERE r.replaced_by = p.run_id AND r.ds = p.ds)
ORDER BY p.ds
