-- name: release
-- version: 3
--
-- Give up what a run still holds, recorded, never silent: at the end of every run
-- (after a failure, on Ctrl-C), and for `sqlrun release`. `dates` are those it can give
-- up now (queries/releasable_of_run.sql, locked by it): on PostgreSQL a date whose
-- transaction is in flight is not among them, and gives itself up when it ends.
{% import "system/dialect.sql" as d %}
INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ run_id }}, {{ d.now() }}, 'released', min(s.value), max(s.value), count(*), NULL, {{ why }}
FROM {{ d.dates(dates) }} AS s
HAVING count(*) > 0;

DELETE FROM reservations
WHERE run_id = {{ run_id }} AND ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
