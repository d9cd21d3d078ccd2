-- name: beyond_window
-- version: 1
--
-- What a look back leaves behind: the dates before its window (`before`, the window's
-- first date) that need work by the look back's own rule (date_states.sql's needs_work,
-- from common.sql: never computed, failed, or changed since built), each counted once by
-- the word `status` shows it with (failed, then missing, then changed), with the first
-- and the last of them. A date a run holds is left out: that run is on it. Missing
-- counts from the first date any run attempted: a date before the history began was
-- never asked for. One row.
--
-- Cost: per date of the history before the window, a few lookups by date on an index
-- (run_partitions_by_ds, the reservations' and source_changes' keys), as date_states.sql
-- does, with none of its per-model work: ten years are 3,650 dates of index lookups.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% macro first_attempted() %}(SELECT min(p.ds) FROM run_partitions AS p
                              WHERE p.status <> 'skipped'){% endmacro %}
WITH RECURSIVE dates(ds) AS (
    {{ d.date_series(first_attempted(), d.days_before(before, 1)) }}
),
per_date AS (
    SELECT d.ds,
           {{ common.built_run("d") }} AS built_run,
           {{ common.last_attempt("d") }} AS last_run
    FROM dates AS d
    -- SQLite's series yields its first date even when it is not before the window
    WHERE d.ds IS NOT NULL AND d.ds < {{ before }}
      AND NOT EXISTS (SELECT 1 FROM reservations AS r WHERE r.ds = d.ds)
),
facts AS (
    SELECT pd.ds,
           (pd.built_run IS NOT NULL) AS computed,
           (lp.status {{ d.same() }} 'failed') AS failed,
           {{ common.source_changed(sources, "pd") }} AS source_changed
    FROM per_date AS pd
    LEFT JOIN run_partitions AS lp ON lp.run_id = pd.last_run AND lp.ds = pd.ds
),
judged AS (
    SELECT f.ds,
           CASE WHEN f.failed THEN 'failed'
                WHEN NOT f.computed THEN 'missing'
                ELSE 'changed' END AS state
    FROM facts AS f
    WHERE {{ common.needs_work("f") }}
)
SELECT count(CASE WHEN j.state = 'changed' THEN 1 END) AS changed,
       count(CASE WHEN j.state = 'failed' THEN 1 END) AS failed,
       count(CASE WHEN j.state = 'missing' THEN 1 END) AS missing,
       min(j.ds) AS first,
       max(j.ds) AS last
FROM judged AS j
