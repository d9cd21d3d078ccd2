-- The columns of a table in the pipeline's schema (a model's, a source), in order, and
-- the kind of value each holds, from its type (queries/sqlite/column_types.sql has the
-- same kinds). No rows: there is no such table. not_null and has_default say what a row
-- that leaves the column out, or gives NULL, gets (`sqlrun load`); an identity or
-- generated column fills itself.
SELECT a.attname::text AS name,
       CASE
           WHEN t.typname IN ('int2', 'int4', 'int8') THEN 'integer'
           WHEN t.typname = 'bool' THEN 'boolean'
           WHEN t.typname IN ('timestamp', 'timestamptz') THEN 'timestamp'
           WHEN t.typname = 'date' THEN 'date'
           WHEN t.typname IN ('numeric', 'float4', 'float8') THEN 'number'
           ELSE 'text'
       END AS kind,
       a.attnotnull AS not_null,
       a.atthasdef OR a.attidentity <> '' OR a.attgenerated <> '' AS has_default
FROM pg_catalog.pg_attribute AS a
JOIN pg_catalog.pg_type AS t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass(quote_ident(:table)) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
