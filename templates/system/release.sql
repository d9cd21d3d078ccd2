-- name: release
-- version: 3
--
-- Give up what a run still holds, recorded, never silent: at the end of every run
-- (after a failure, on Ctrl-C), and for `sqlrun release`. `dates` are those it can give
-- up now (queries/releasable_of_run.sql, locked by it): on PostgreSQL a date whose
-- transaction is in flight is not among them, and gives itself up when it ends.
-- `recorded`: the event is written even when nothing is freed (`sqlrun release` of a run
-- whose only date is in flight still says who released it and why).
{% import "system/dialect.sql" as d %}
INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ run_id }}, {{ d.now() }}, 'released', min(s.value), max(s.value), count(*), NULL, {{ why }}
FROM {{ d.dates(dates) }} AS s
{% if not recorded %}HAVING count(*) > 0{% endif %};

DELETE FROM reservations
WHERE run_id = {{ run_id }} AND ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
