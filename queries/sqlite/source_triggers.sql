-- How many of sqlrun's change triggers a source table has (source_tracking.sql).
SELECT count(*) FROM sqlite_schema
WHERE type = 'trigger' AND tbl_name = :table AND name LIKE 'sqlrun\_%' ESCAPE '\'
