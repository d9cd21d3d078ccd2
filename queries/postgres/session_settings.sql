-- sqlrun's settings for its session (a JSON object of setting and value), in one
-- statement; a setting this server does not know is left alone. (Read by name, not
-- through pg_settings, whose scan of every setting cost a new session 2 to 4 ms.)
SELECT set_config(s.key, s.value, false)
FROM json_each_text(CAST(:settings AS json)) AS s
WHERE current_setting(s.key, true) IS NOT NULL
