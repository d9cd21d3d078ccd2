SELECT checksum, first_used_at, body FROM template_versions WHERE name = :name AND version = :version
