-- name: lookup_tracking
-- version: 1
--
-- The triggers that note changes of one lookup (PostgreSQL): see
-- templates/system/lookup_tracking.sql for what is noted and why. Here once per statement:
-- the keys of the rows a statement inserted, deleted or really changed (an update's old
-- and new rows that differ) give their dates from the fact's index on (column, date), and
-- each such date is noted once if a changed key has a current fact row there. A truncate
-- notes every date ever built. Unlike SQLite a date noted already is noted again: a
-- date's transaction may be taking that note right now, from a snapshot without this
-- change. Notes are only ever inserted, so loaders never wait for each
-- other over them, as for the sources' own notes.
--
-- The function runs as its owner, with the pipeline's schema (then pg_temp) as search_path
-- and in UTC, as the sources' does.
{% set t = lookup.table %}
{% set f = lookup.function %}
{% set key = lookup.key|ident %}
{% import "system/common.sql" as common %}
{% set fact = lookup.fact|ident %}
{% set col = lookup.fact_column|ident %}
{% set date = lookup.fact_date|ident %}
{#- The keys a statement touched: `rows` its inserted or deleted rows, or for an update
    the rows of either side that the other does not have (a real change). The dates come
    in two steps: the dates of the keys' fact rows, from the index on (column, date)
    alone; then, per such date, whether any of the keys has a current fact row there,
    which stops at the first that does (a date of many changed keys is tested once, not
    once per key and order). #}
{% macro touch(rows) %}
        WITH k AS MATERIALIZED (
{% if rows == "new" %}
            SELECT DISTINCT {{ key }} AS key FROM sqlrun_new
{% elif rows == "old" %}
            SELECT DISTINCT {{ key }} AS key FROM sqlrun_old
{% else %}
            SELECT n.{{ key }} AS key FROM (SELECT * FROM sqlrun_new EXCEPT SELECT * FROM sqlrun_old) AS n
            UNION
            SELECT o.{{ key }} FROM (SELECT * FROM sqlrun_old EXCEPT SELECT * FROM sqlrun_new) AS o
{% endif %}
        )
        INSERT INTO source_changes (source, ds, changed_at)
        SELECT {{ t }}, CAST(c.ds AS date), now()
        FROM (SELECT DISTINCT f.{{ date }} AS ds
              FROM k JOIN {{ fact }} AS f ON f.{{ col }} = k.key
              WHERE f.{{ date }} IS NOT NULL) AS c
{% if lookup.fact_rows != lookup.fact %}
        -- A date at a time, stopping at its first current row of a changed key (LIMIT 1
        -- keeps the planner from testing every order of every key first).
        CROSS JOIN LATERAL (SELECT 1 FROM k JOIN {{ lookup.fact_rows|ident }} AS g
                            ON g.{{ col }} = k.key
                            WHERE g.{{ date }} = c.ds LIMIT 1) AS current_row
{% endif %}
        ;
{% endmacro %}
DROP INDEX IF EXISTS {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }};
CREATE INDEX {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }}
    ON {{ fact }} ({{ col }}, {{ date }});
CREATE OR REPLACE FUNCTION {{ f|ident }}() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET TimeZone = 'UTC'
AS $sqlrun$
BEGIN
    IF TG_OP = 'INSERT' THEN
{{ touch("new") }}
    ELSIF TG_OP = 'DELETE' THEN
{{ touch("old") }}
    ELSIF TG_OP = 'UPDATE' THEN
{{ touch("changed") }}
    ELSE
        -- TRUNCATE: every date built so far may have lost its lookup rows.
        INSERT INTO source_changes (source, ds, changed_at)
        SELECT {{ t }}, p.ds, now()
        FROM run_partitions AS p
        WHERE p.status IN {{ common.built() }}
        GROUP BY p.ds;
    END IF;
    RETURN NULL;
END
$sqlrun$;
DROP TRIGGER IF EXISTS sqlrun_insert ON {{ t|ident }};
DROP TRIGGER IF EXISTS sqlrun_delete ON {{ t|ident }};
DROP TRIGGER IF EXISTS sqlrun_update ON {{ t|ident }};
DROP TRIGGER IF EXISTS sqlrun_truncate ON {{ t|ident }};
CREATE TRIGGER sqlrun_insert AFTER INSERT ON {{ t|ident }}
    REFERENCING NEW TABLE AS sqlrun_new FOR EACH STATEMENT EXECUTE FUNCTION {{ f|ident }}();
CREATE TRIGGER sqlrun_delete AFTER DELETE ON {{ t|ident }}
    REFERENCING OLD TABLE AS sqlrun_old FOR EACH STATEMENT EXECUTE FUNCTION {{ f|ident }}();
CREATE TRIGGER sqlrun_update AFTER UPDATE ON {{ t|ident }}
    REFERENCING OLD TABLE AS sqlrun_old NEW TABLE AS sqlrun_new
    FOR EACH STATEMENT EXECUTE FUNCTION {{ f|ident }}();
CREATE TRIGGER sqlrun_truncate AFTER TRUNCATE ON {{ t|ident }}
    FOR EACH STATEMENT EXECUTE FUNCTION {{ f|ident }}();
