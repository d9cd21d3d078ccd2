-- name: reclaim
-- version: 3
--
-- A holder that is gone (its process died, or its lease ran out) must not block its
-- dates forever: record the reclaim (from which run, by which run, why), free what
-- it still holds, and mark it interrupted. Its committed dates stay as they are.
-- `dates` are those it holds that can be freed now (queries/releasable_of_run.sql,
-- locked by this step): on PostgreSQL a date a worker of the run is still computing this
-- instant is left held, never waited for; that worker finds its run gone before it
-- commits, and a later reclaim frees the date.
{% import "system/dialect.sql" as d %}
INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ dead_run }}, {{ d.now() }}, 'reclaimed', min(s.value), max(s.value), count(*), {{ by_run }}, {{ why }}
FROM {{ d.dates(dates) }} AS s;

DELETE FROM reservations
WHERE run_id = {{ dead_run }} AND ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);

UPDATE runs
SET status = 'interrupted',
    finished_at = coalesce(finished_at, {{ d.now() }}),
    error = coalesce(error, {{ why }})
WHERE run_id = {{ dead_run }} AND status IN ('reserved', 'running');
