-- The template versions a run uses (a JSON array of {name, version, kind}), in one
-- statement.
INSERT INTO run_templates (run_id, name, version, kind)
SELECT CAST(:run_id AS bigint), f.name, f.version, f.kind
FROM json_to_recordset(CAST(:files AS json)) AS f (name text, version bigint, kind text)
