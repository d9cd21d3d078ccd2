-- Which of the tables (a JSON array of names) have planner statistics stale enough to
-- mislead it, by the server's own counters and autovacuum's own rule: never analyzed, or
-- more rows changed since the last ANALYZE than autovacuum_analyze_threshold +
-- autovacuum_analyze_scale_factor x the rows the table had then (50 + 10 % by default).
-- A view, or a table that is not there, is left out. How many rows changed, for the note.
-- "Never analyzed" is the table's own state (reltuples -1, PostgreSQL 14 and later), not
-- the activity counters: those start empty on a database copied from a template, after a
-- crash or pg_stat_reset(), with the statistics intact. (Before 14 a table never analyzed
-- has reltuples 0 and only the counters tell.)
-- The counters are read by table (pg_stat_get_*), not through pg_stat_user_tables, which
-- computes them for every table of the database: planned and run on a new session this
-- cost a run's start 6 ms, now under 1.
SELECT t.name, pg_catalog.pg_stat_get_mod_since_analyze(c.oid) AS changed
FROM json_array_elements_text(CAST(:tables AS json)) AS t (name)
JOIN pg_catalog.pg_class AS c ON c.oid = to_regclass(quote_ident(t.name)) AND c.relkind IN ('r', 'p', 'm')
WHERE c.reltuples < 0
   OR pg_catalog.pg_stat_get_mod_since_analyze(c.oid)
        > CAST(current_setting('autovacuum_analyze_threshold') AS float8)
          + CAST(current_setting('autovacuum_analyze_scale_factor') AS float8)
            * greatest(c.reltuples, 0)
ORDER BY t.name
