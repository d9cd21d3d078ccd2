-- name: date_states
-- version: 5
--
-- What the state store knows about each date of an interval: its last build (which
-- run, kind, when, and with which version of each model, so stale dates can be told), its
-- latest attempt (failed or not, and why), its seal and corrections, who holds it
-- now, and whether a source it reads changed since its build. Every lookup is by date
-- on an index: the cost follows the interval's length, not the history's. (`status`
-- without an interval asks known_span.sql for one first.)
{% import "system/dialect.sql" as d %}
WITH RECURSIVE dates(ds) AS (
    {{ d.date_series(start, end) }}
),
per_date AS (
    SELECT d.ds,
           (SELECT p.run_id FROM run_partitions AS p
             WHERE p.ds = d.ds AND p.status IN ('success', 'corrected', 'unchanged')
             ORDER BY p.run_id DESC LIMIT 1) AS built_run,
           (SELECT p.run_id FROM run_partitions AS p
             WHERE p.ds = d.ds AND p.status <> 'skipped'
             ORDER BY p.run_id DESC LIMIT 1) AS last_run,
           -- the last build of every model at once (no --select): what a date built
           -- before dates recorded their models (partition_models) was built by
           (SELECT p.run_id FROM run_partitions AS p
              JOIN runs AS fr ON fr.run_id = p.run_id
             WHERE p.ds = d.ds AND p.status IN ('success', 'corrected', 'unchanged')
               AND fr.selected_models IS NULL
             ORDER BY p.run_id DESC LIMIT 1) AS full_run
    FROM dates AS d
)
SELECT pd.ds,
       pd.built_run,
       br.kind AS built_kind,
       bp.finished_at AS built_at,
       (SELECT string_agg(b.name || '@' || b.version, ',' ORDER BY b.name)
          FROM (SELECT pm.model AS name, pm.version
                  FROM partition_models AS pm
                 WHERE pm.ds = pd.ds
                UNION ALL
                -- built before dates recorded their models: the versions of its last run
                SELECT t.name, t.version
                  FROM run_templates AS t
                 WHERE t.run_id = pd.full_run AND t.kind = 'model'
                   AND NOT EXISTS (SELECT 1 FROM partition_models AS pm
                                    WHERE pm.ds = pd.ds AND pm.model = t.name)) AS b
       ) AS built_models,
       pd.last_run,
       lp.status AS last_status,
       lp.error AS last_error,
       s.sealed_at,
       s.sealed_by,
       {% for model in models %}
       (SELECT count(*) FROM {{ model.corrections_table|ident }} AS c
         WHERE c.{{ model.date_column|ident }} = pd.ds) +
       {% endfor %}
       0 AS corrections,
       r.run_id AS held_by,
       r.reserved_at AS held_since,
       r.expires_at AS held_until,
       hr.kind AS holder_kind,
       hr.requested_by AS holder_by,
       hr.status AS holder_status,
{% if sources %}
       EXISTS (SELECT 1
                 FROM source_changes AS n
                WHERE n.source IN ({% for s in sources %}{% if not loop.first %}, {% endif %}{{ s.table }}{% endfor %})
                  AND n.ds = pd.ds) AS source_changed
{% else %}
       (1 = 0) AS source_changed
{% endif %},
       lp.failed_model AS failed_model
FROM per_date AS pd
LEFT JOIN run_partitions AS bp ON bp.run_id = pd.built_run AND bp.ds = pd.ds
LEFT JOIN runs AS br ON br.run_id = pd.built_run
LEFT JOIN run_partitions AS lp ON lp.run_id = pd.last_run AND lp.ds = pd.ds
LEFT JOIN seals AS s ON s.ds = pd.ds
LEFT JOIN reservations AS r ON r.ds = pd.ds
LEFT JOIN runs AS hr ON hr.run_id = r.run_id
ORDER BY pd.ds
