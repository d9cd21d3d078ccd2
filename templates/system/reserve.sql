-- name: reserve
-- version: 3
--
-- Inside the one transaction that reserves a run's dates, after dead holders were
-- reclaimed: of the selected dates, those another run holds are skipped (recorded
-- with their holder, never waited for, never overwritten); the free ones become this
-- run's. reservations(ds) is the primary key: two holders of a date cannot exist.
-- Bookkeeping steps take turns, but on PostgreSQL a date of another run may commit
-- between these statements and give up its reservation: a date skipped by the first
-- statement stays skipped (its holder has just computed it), never also reserved.
{% import "system/dialect.sql" as d %}
{% macro expiry(seconds) %}{% if seconds is none %}NULL{% else %}{{ d.from_now(seconds) }}{% endif %}{% endmacro %}
INSERT INTO run_partitions (run_id, ds, status, held_by, error, started_at, finished_at)
SELECT {{ run_id }}, s.value, 'skipped', r.run_id, NULL, {{ d.now() }}, {{ d.now() }}
FROM {{ d.dates(selected) }} AS s
JOIN reservations AS r ON r.ds = s.value AND r.run_id <> {{ run_id }};

INSERT INTO reservations (ds, run_id, reserved_at, expires_at)
SELECT s.value, {{ run_id }}, {{ d.now() }}, {{ expiry(hold_seconds) }}
FROM {{ d.dates(selected) }} AS s
WHERE NOT EXISTS (SELECT 1 FROM reservations AS r WHERE r.ds = s.value)
  AND NOT EXISTS (SELECT 1 FROM run_partitions AS p
                  WHERE p.run_id = {{ run_id }} AND p.ds = s.value AND p.status = 'skipped')
ON CONFLICT (ds) DO NOTHING;

UPDATE reservations SET expires_at = {{ expiry(hold_seconds) }} WHERE run_id = {{ run_id }};

INSERT INTO run_events (run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail)
SELECT {{ run_id }}, {{ d.now() }}, 'reserved', min(ds), max(ds), count(*), NULL, NULL
FROM reservations WHERE run_id = {{ run_id }}
HAVING count(*) > 0;
