SELECT body FROM template_versions WHERE name = :name AND version = :version
