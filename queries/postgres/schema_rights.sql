-- What the session's role may do with the pipeline's schema, read before anything is
-- written: the role and database (for a GRANT that names them), whether the schema
-- exists, whether the role may create it, may use it, and the first table of the state
-- store every command reads that the role may not read (NULL when it reads them all).
-- Only those: a table of someone else's in the schema (a loader's staging table) is none
-- of sqlrun's business, and a model's table the role may not read is named when the
-- server refuses it.
SELECT CAST(current_user AS text),
       CAST(current_database() AS text),
       n.oid IS NOT NULL,
       has_database_privilege(current_database(), 'CREATE'),
       n.oid IS NOT NULL AND has_schema_privilege(n.oid, 'USAGE'),
       (SELECT min(CAST(c.relname AS text)) FROM pg_class c
         WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p')
           AND c.relname IN ('sqlrun_schema_history', 'runs', 'run_partitions', 'reservations')
           AND NOT has_table_privilege(c.oid, 'SELECT'))
FROM (SELECT CAST(to_regnamespace(quote_ident(:schema)) AS oid) AS oid) n
