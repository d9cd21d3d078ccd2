SELECT t.name, t.version, t.kind, v.checksum
FROM run_templates t
LEFT JOIN template_versions v ON v.name = t.name AND v.version = t.version
WHERE t.run_id = :run_id
ORDER BY t.kind, t.name
