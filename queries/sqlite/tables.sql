-- The tables of the database, by name (`sqlrun load` names those it can load into).
SELECT name FROM sqlite_schema
WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\'
ORDER BY name
