-- name: record_not_ready
-- version: 1
--
-- A date whose sources are not ready (a model's `-- ready:` is false): not built. Its
-- record says so (skipped, held by nobody, `error` saying why), and the date is released
-- so that the next run takes it once it is ready. Its rows, if any, stay as they were.
{% import "system/dialect.sql" as d %}
INSERT INTO run_partitions (run_id, ds, status, held_by, error, started_at, finished_at)
VALUES ({{ run_id }}, {{ ds }}, 'skipped', NULL, {{ reason }}, {{ started_at }}, {{ d.clock() }});
DELETE FROM reservations WHERE ds = {{ ds }} AND run_id = {{ run_id }};
UPDATE reservations SET expires_at = {{ d.from_now(lease_seconds) }}
WHERE run_id = {{ run_id }} AND expires_at < {{ d.from_now(lease_seconds // 2) }};
