-- The columns of a source table in the pipeline's schema, in order (none: there is no
-- such table).
SELECT a.attname::text
FROM pg_catalog.pg_attribute AS a
WHERE a.attrelid = to_regclass(quote_ident(:table)) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum
