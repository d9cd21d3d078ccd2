-- name: release
-- version: 2
--
-- Give up what a run still holds, recorded, never silent: at the end of every run
-- (after a failure, on Ctrl-C), and for `sqlrun release`.
{% import "system/dialect.sql" as d %}
INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ run_id }}, {{ d.now() }}, 'released', min(ds), max(ds), count(*), NULL, {{ why }}
FROM reservations WHERE run_id = {{ run_id }}
HAVING count(*) > 0;

DELETE FROM reservations WHERE run_id = {{ run_id }};
