-- name: run_replaced
-- version: 1
--
-- `sqlrun diff RUN`: the partitions of one model that run `run_id` replaced
-- (replaced_partitions), in date order, each with what tells whether its two versions are
-- still there to compare: the run whose rows it replaced (`replaced_run`, NULL: never
-- built) and how many rows that was (`row_count`: fewer in <table>_history means the
-- retention pruned them); the next run that replaced the partition since (`since`,
-- whose row_count says how many of the run's rows went to history: `since_rows`); and how
-- many other runs' rows the table holds there now (`other_runs_now`: more than none with
-- no replace since recorded means the record of that replace was pruned).
SELECT p.ds, p.run_id AS replaced_run, p.row_count,
       s.replaced_by AS since, s.row_count AS since_rows,
       (SELECT count(DISTINCT t.run_id) FROM {{ model.table|ident }} AS t
         WHERE t.{{ model.date_column|ident }} = p.ds AND t.run_id <> {{ run_id }}) AS other_runs_now
FROM replaced_partitions AS p
LEFT JOIN replaced_partitions AS s
  ON s.model = p.model AND s.ds = p.ds
 AND s.replaced_by = (SELECT min(n.replaced_by) FROM replaced_partitions AS n
                       WHERE n.model = p.model AND n.ds = p.ds AND n.replaced_by > p.replaced_by)
WHERE p.replaced_by = {{ run_id }}
  AND p.model = {{ "models/" ~ model.name }}
{% if start is not none %}
  AND p.ds BETWEEN {{ start }} AND {{ end }}
{% endif %}
ORDER BY p.ds
