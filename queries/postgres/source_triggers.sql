-- How many of sqlrun's change triggers a source table has, by their exact names, that
-- fire in ordinary sessions (enabled: O, or ALWAYS: A; not disabled, not REPLICA only).
SELECT count(*) AS triggers FROM pg_catalog.pg_trigger AS t
WHERE t.tgrelid = to_regclass(quote_ident(:table)) AND NOT t.tgisinternal
  AND t.tgenabled IN ('O', 'A')
  AND t.tgname IN ('sqlrun_insert', 'sqlrun_delete', 'sqlrun_update', 'sqlrun_truncate')
