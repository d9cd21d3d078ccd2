INSERT INTO run_templates (run_id, name, version, kind) VALUES (:run_id, :name, :version, :kind)
