-- The tables of the pipeline's schema, by name (`sqlrun load` names those it can load
-- into): ordinary and partitioned tables, not views.
SELECT c.relname::text AS name
FROM pg_catalog.pg_class AS c
JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
ORDER BY c.relname
