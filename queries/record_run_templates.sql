-- The template versions a run uses (a JSON array of {name, version, kind}), in one
-- statement.
INSERT INTO run_templates (run_id, name, version, kind)
SELECT :run_id, json_extract(f.value, '$.name'), json_extract(f.value, '$.version'),
       json_extract(f.value, '$.kind')
FROM json_each(:files) AS f
