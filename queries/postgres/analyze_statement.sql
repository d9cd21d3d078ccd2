-- The ANALYZE of one table (its name as the server quotes it), and whether this role may
-- run it: ANALYZE of a table one may not analyze only warns and skips it. PostgreSQL 17
-- lets a role with the MAINTAIN right (or pg_maintain) analyze; before, the table's owner
-- (or a member of its role); the database's owner and superusers on every version (a
-- wrong yes costs only the server's warning, and the table is skipped). SKIP_LOCKED: a table
-- another ANALYZE or VACUUM (autovacuum's) holds is left to it, not waited for. No row: no
-- such table.
SELECT format('ANALYZE (SKIP_LOCKED) %s', CAST(c.oid AS regclass)) AS statement,
       CASE WHEN CAST(current_setting('server_version_num') AS integer) >= 170000
            THEN has_table_privilege(c.oid, 'MAINTAIN')
            ELSE pg_has_role(c.relowner, 'USAGE')
       END
       OR (SELECT pg_has_role(d.datdba, 'USAGE') FROM pg_catalog.pg_database AS d
           WHERE d.datname = current_database()) AS may_analyze
FROM pg_catalog.pg_class AS c
WHERE c.oid = to_regclass(quote_ident(:table)) AND c.relkind IN ('r', 'p', 'm')
