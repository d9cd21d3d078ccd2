-- sqlrun's session defaults (a JSON object of setting and value), each unless the
-- connection's options set it (source 'client'); a setting this server does not know is
-- left alone. One statement for them all.
SELECT set_config(s.name, d.value, false)
FROM json_each_text(CAST(:defaults AS json)) AS d
JOIN pg_settings AS s ON s.name = d.key
WHERE s.source <> 'client'
