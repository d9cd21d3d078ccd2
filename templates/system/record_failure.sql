-- name: record_failure
-- version: 5
--
-- After a date's transaction rolled back: record the failure with the database's
-- message and the model whose statement failed (if one did), and release the date so
-- that the next run can take it.
{% import "system/dialect.sql" as d %}
INSERT INTO run_partitions (run_id, ds, status, held_by, error, started_at, finished_at,
                            failed_model)
VALUES ({{ run_id }}, {{ ds }}, 'failed', NULL, {{ error }}, {{ started_at }}, {{ d.clock() }},
        {{ model }});
DELETE FROM reservations WHERE ds = {{ ds }} AND run_id = {{ run_id }};
-- The run lives on: its lease on the dates it still holds is renewed as after a date
-- that committed (a long --keep-going run whose every date fails stays alive).
UPDATE reservations SET expires_at = {{ d.from_now(lease_seconds) }}
WHERE run_id = {{ run_id }} AND expires_at < {{ d.from_now(lease_seconds // 2) }};
