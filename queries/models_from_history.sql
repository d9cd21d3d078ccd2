-- A database whose runs predate the `models` table: the models its latest run used (the
-- pipeline as it was last run), each with the text of that version, whose header names
-- its table and key, and when the model was first used.
SELECT t.name, t.version, v.body,
       (SELECT min(f.first_used_at) FROM template_versions AS f WHERE f.name = t.name)
           AS first_used_at,
       (SELECT min(f.first_run_id) FROM template_versions AS f WHERE f.name = t.name)
           AS first_run_id
FROM run_templates AS t
JOIN template_versions AS v ON v.name = t.name AND v.version = t.version
WHERE t.kind = 'model'
  AND t.run_id = (SELECT max(r.run_id) FROM run_templates AS r)
ORDER BY t.name
