-- name: lookup_tracking
-- version: 1
--
-- The triggers that note changes of one lookup (PostgreSQL): see
-- templates/system/lookup_tracking.sql for what is noted and why. Here once per statement:
-- the keys of the rows a statement inserted, deleted or really changed (an update's old
-- and new rows that differ) are joined with the fact's current rows on the column that
-- holds the key (indexed by sqlrun), and each date found is noted once. A truncate notes
-- every date ever built. Notes are only ever inserted, so loaders never wait for each
-- other over them, as for the sources' own notes.
--
-- The function runs as its owner, with the pipeline's schema (then pg_temp) as search_path
-- and in UTC, as the sources' does.
{% set t = lookup.table %}
{% set f = lookup.function %}
{% set key = lookup.key|ident %}
{% import "system/common.sql" as common %}
{#- The keys a statement touched: `rows` its inserted or deleted rows, or for an update
    the rows of either side that the other does not have (a real change). #}
{% macro touch(rows) %}
        INSERT INTO source_changes (source, ds, changed_at)
        SELECT {{ t }}, touched.ds, now()
        FROM (SELECT DISTINCT CAST(f.{{ lookup.fact_date|ident }} AS date) AS ds
              FROM (
{% if rows == "new" %}
                    SELECT {{ key }} FROM sqlrun_new
{% elif rows == "old" %}
                    SELECT {{ key }} FROM sqlrun_old
{% else %}
                    SELECT n.{{ key }} FROM (SELECT * FROM sqlrun_new EXCEPT SELECT * FROM sqlrun_old) AS n
                    UNION
                    SELECT o.{{ key }} FROM (SELECT * FROM sqlrun_old EXCEPT SELECT * FROM sqlrun_new) AS o
{% endif %}
                   ) AS k
              JOIN {{ lookup.fact_rows|ident }} AS f ON f.{{ lookup.fact_column|ident }} = k.{{ key }}
              WHERE f.{{ lookup.fact_date|ident }} IS NOT NULL) AS touched;
{% endmacro %}
CREATE INDEX IF NOT EXISTS {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }}
    ON {{ lookup.fact|ident }} ({{ lookup.fact_column|ident }});
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
