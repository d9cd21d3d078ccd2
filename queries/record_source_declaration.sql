-- A declared source's table was created, adopted, made again or migrated to a version.
INSERT INTO source_declarations (source, version, checksum, body, how, declared_at)
VALUES (:source, :version, :checksum, :body, :how, CURRENT_TIMESTAMP)
ON CONFLICT (source, version) DO NOTHING
