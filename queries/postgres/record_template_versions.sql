-- The first use of a template version keeps its checksum and text for good: the versions
-- given (a JSON array of {name, version, kind, checksum, body}) in one statement.
INSERT INTO template_versions (name, version, kind, checksum, body, first_used_at, first_run_id)
SELECT f.name, f.version, f.kind, f.checksum, f.body, CURRENT_TIMESTAMP, CAST(:run_id AS bigint)
FROM json_to_recordset(CAST(:files AS json))
     AS f (name text, version bigint, kind text, checksum text, body text)
ON CONFLICT (name, version) DO NOTHING
