-- The recorded versions among the template files given (a JSON array of
-- {name, version, checksum}), in one read: each one's checksum and first use, and its
-- recorded text only where the checksum differs (it is needed then only, to tell an edit
-- from a change of line endings).
SELECT v.name, v.version, v.checksum, v.first_used_at,
       CASE WHEN v.checksum <> json_extract(f.value, '$.checksum') THEN v.body END AS body_if_other
FROM json_each(:files) AS f
JOIN template_versions AS v
  ON v.name = json_extract(f.value, '$.name') AND v.version = json_extract(f.value, '$.version')
