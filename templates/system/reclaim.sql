-- name: reclaim
-- version: 2
--
-- A holder that is gone (its process died, or its lease ran out) must not block its
-- dates forever: record the reclaim (from which run, by which run, why), free what
-- it still holds, and mark it interrupted. Its committed dates stay as they are.
{% import "system/dialect.sql" as d %}
INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ dead_run }}, {{ d.now() }}, 'reclaimed', min(ds), max(ds), count(*), {{ by_run }}, {{ why }}
FROM reservations WHERE run_id = {{ dead_run }};

DELETE FROM reservations WHERE run_id = {{ dead_run }};

UPDATE runs
SET status = 'interrupted',
    finished_at = coalesce(finished_at, {{ d.now() }}),
    error = coalesce(error, {{ why }})
WHERE run_id = {{ dead_run }} AND status IN ('reserved', 'running');
