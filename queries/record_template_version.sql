-- The first use of a template version keeps its checksum and text for good.
INSERT INTO template_versions (name, version, kind, checksum, body, first_used_at, first_run_id)
VALUES (:name, :version, :kind, :checksum, :body, CURRENT_TIMESTAMP, :run_id)
ON CONFLICT (name, version) DO NOTHING
