-- The first use of a template version keeps its checksum and text for good: the versions
-- given (a JSON array of {name, version, kind, checksum, body}) in one statement.
INSERT INTO template_versions (name, version, kind, checksum, body, first_used_at, first_run_id)
SELECT json_extract(f.value, '$.name'), json_extract(f.value, '$.version'),
       json_extract(f.value, '$.kind'), json_extract(f.value, '$.checksum'),
       json_extract(f.value, '$.body'), CURRENT_TIMESTAMP, :run_id
FROM json_each(:files) AS f
WHERE true -- SQLite reads ON CONFLICT after a bare FROM as a join's; a WHERE ends the FROM
ON CONFLICT (name, version) DO NOTHING
