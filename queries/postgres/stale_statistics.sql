-- Which of the tables (a JSON array of names) have planner statistics stale enough to
-- mislead it, by the server's own counters and autovacuum's own rule: never analyzed, or
-- more rows changed since the last ANALYZE than autovacuum_analyze_threshold +
-- autovacuum_analyze_scale_factor x the rows the table had then (50 + 10 % by default).
-- A view, or a table that is not there, is left out. How many rows changed, for the note.
-- "Never analyzed" is the table's own state (reltuples -1 on PostgreSQL 14+; before, no
-- statistics in pg_stats), not the activity counters: those start empty on a database
-- copied from a template, after a crash or pg_stat_reset(), with the statistics intact.
-- The counters are read by table (pg_stat_get_*), not through pg_stat_user_tables, which
-- computes them for every table of the database (25 ms of a run's start here, against 2).
SELECT t.name, pg_catalog.pg_stat_get_mod_since_analyze(c.oid)
FROM json_array_elements_text(CAST(:tables AS json)) AS t (name)
JOIN pg_catalog.pg_class AS c ON c.oid = to_regclass(quote_ident(t.name)) AND c.relkind IN ('r', 'p', 'm')
WHERE c.reltuples < 0
   OR (CAST(current_setting('server_version_num') AS integer) < 140000
       AND pg_catalog.pg_stat_get_last_analyze_time(c.oid) IS NULL
       AND pg_catalog.pg_stat_get_last_autoanalyze_time(c.oid) IS NULL
       AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_stats AS ps
                       JOIN pg_catalog.pg_namespace AS n ON n.nspname = ps.schemaname
                       WHERE n.oid = c.relnamespace AND ps.tablename = c.relname))
   OR pg_catalog.pg_stat_get_mod_since_analyze(c.oid)
        > CAST(current_setting('autovacuum_analyze_threshold') AS float8)
          + CAST(current_setting('autovacuum_analyze_scale_factor') AS float8)
            * greatest(c.reltuples, 0)
ORDER BY t.name
