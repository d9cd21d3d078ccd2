-- How many of sqlrun's change triggers a source table has, enabled
-- (source_tracking.sql): a disabled one tracks nothing.
SELECT count(*) FROM pg_catalog.pg_trigger AS t
WHERE t.tgrelid = to_regclass(quote_ident(:table)) AND NOT t.tgisinternal
  AND t.tgenabled <> 'D' AND t.tgname LIKE 'sqlrun\_%' ESCAPE '\'
