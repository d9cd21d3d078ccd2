INSERT INTO source_tracking (source, triggers, install_sql, installed_at)
VALUES (:source, :triggers, :install_sql, datetime('now'))
ON CONFLICT (source) DO UPDATE SET triggers = excluded.triggers,
    install_sql = excluded.install_sql, installed_at = excluded.installed_at
