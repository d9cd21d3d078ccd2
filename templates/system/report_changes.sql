-- name: report_changes
-- version: 1
--
-- What each run changed in one model, for `sqlrun report`: the newest `runs` runs that
-- replaced partitions of the model within start..end (replaced_partitions, which each
-- replace writes: system/replace.sql), newest first, each with
-- - partitions: how many it replaced; built_before: how many of them held a version
--   built before (the others were built for the first time);
-- - before: the rows it took out (<table>_history WHERE replaced_by = the run);
-- - after: the rows it wrote (the model's table WHERE run_id = the run, and, where a
--   later run replaced those since, <table>_history WHERE run_id = the run);
-- - per value column that adds up (`measures`): its total before and after, and the
--   delta (after - before). A missing side counts 0: a first build adds its whole total.
-- Sealed dates are corrected, not replaced: their changes are the corrections, not here.
-- History pruned by `[history] keep` is pruned here too (its replaced_partitions rows
-- go with it), so a run older than the retention is not shown.
WITH shown AS (
    SELECT rp.replaced_by AS run_id, count(*) AS partitions,
           count(rp.run_id) AS built_before,
           min(rp.ds) AS first_ds, max(rp.ds) AS last_ds
    FROM replaced_partitions AS rp
    WHERE rp.model = {{ "models/" ~ model.name }}
      AND rp.ds BETWEEN {{ start }} AND {{ end }}
    GROUP BY rp.replaced_by
    ORDER BY rp.replaced_by DESC
    LIMIT {{ runs }}
),
before_rows AS (
    SELECT h.replaced_by AS run_id, count(*) AS rows_before
           {% for m in measures %}
           , sum(h.{{ m.column|ident }}) AS {{ ("before_" ~ m.column)|ident }}
           {% endfor %}
    FROM {{ model.history_table|ident }} AS h
    WHERE h.replaced_by IN (SELECT s.run_id FROM shown AS s)
      AND h.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
    GROUP BY h.replaced_by
),
written AS (
    SELECT t.run_id{% for m in measures %}, t.{{ m.column|ident }}{% endfor %}

    FROM {{ model.table|ident }} AS t
    WHERE t.run_id IN (SELECT s.run_id FROM shown AS s)
      AND t.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
    UNION ALL
    SELECT h.run_id{% for m in measures %}, h.{{ m.column|ident }}{% endfor %}

    FROM {{ model.history_table|ident }} AS h
    WHERE h.run_id IN (SELECT s.run_id FROM shown AS s)
      AND h.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
),
after_rows AS (
    SELECT w.run_id, count(*) AS rows_after
           {% for m in measures %}
           , sum(w.{{ m.column|ident }}) AS {{ ("after_" ~ m.column)|ident }}
           {% endfor %}
    FROM written AS w
    GROUP BY w.run_id
)
SELECT s.run_id, s.partitions, s.built_before, s.first_ds, s.last_ds,
       coalesce(b.rows_before, 0) AS rows_before, coalesce(a.rows_after, 0) AS rows_after
       {% for m in measures %}
       , coalesce(b.{{ ("before_" ~ m.column)|ident }}, 0) AS {{ ("before_" ~ m.column)|ident }}
       , coalesce(a.{{ ("after_" ~ m.column)|ident }}, 0) AS {{ ("after_" ~ m.column)|ident }}
       , coalesce(a.{{ ("after_" ~ m.column)|ident }}, 0)
         - coalesce(b.{{ ("before_" ~ m.column)|ident }}, 0) AS {{ ("delta_" ~ m.column)|ident }}
       {% endfor %}
FROM shown AS s
LEFT JOIN before_rows AS b ON b.run_id = s.run_id
LEFT JOIN after_rows AS a ON a.run_id = s.run_id
ORDER BY s.run_id DESC
