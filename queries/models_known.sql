-- The models this database knows, retired ones too.
SELECT name, table_name, key_columns, version, first_seen_at, first_run_id,
       retired_at, retired_by, retired_reason
FROM models
ORDER BY name
