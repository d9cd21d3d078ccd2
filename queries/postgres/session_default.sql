-- One of sqlrun's session defaults, unless the connection's options set it (source
-- 'client'); a setting this server does not know is left alone.
SELECT set_config(name, :value, false) FROM pg_settings WHERE name = :name AND source <> 'client'
