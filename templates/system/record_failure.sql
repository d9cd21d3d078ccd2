-- name: record_failure
-- version: 4
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
