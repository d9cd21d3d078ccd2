-- Where the latest run took its templates from ('built-in' or a folder): a hint for a
-- command run with templates that are not this database's pipeline.
SELECT run_id, templates_from
FROM runs
WHERE templates_from IS NOT NULL
ORDER BY run_id DESC
LIMIT 1
