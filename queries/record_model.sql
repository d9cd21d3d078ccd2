-- A model of the templates: added the first time it is used here, back from a retirement,
-- or its version and key kept current. Its table was checked before: a table belongs to
-- one live model. The first run that uses it fills first_run_id.
INSERT INTO models (name, table_name, key_columns, version, first_seen_at, first_run_id)
VALUES (:name, :table, :key, :version, coalesce(:first_seen_at, CURRENT_TIMESTAMP), :run_id)
ON CONFLICT (name) DO UPDATE SET
    table_name = excluded.table_name,
    key_columns = excluded.key_columns,
    version = excluded.version,
    first_run_id = coalesce(models.first_run_id, excluded.first_run_id),
    retired_at = NULL,
    retired_by = NULL,
    retired_reason = NULL
