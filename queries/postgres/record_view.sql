INSERT INTO sqlrun_views (name, create_sql) VALUES (:name, :create)
ON CONFLICT (name) DO UPDATE SET create_sql = excluded.create_sql
