-- name: source_tracking
-- version: 2
--
-- The triggers that note changes of one source (PostgreSQL) in source_changes. Every
-- insert, delete, real update or truncate of source rows notes the rows' dates, and, when
-- the source has a key (the versions of one record share it, as a re-sent order shares
-- its order_id), every date the record's other rows are on: a re-sent order that moves to
-- another date changes both dates.
--
-- Notes are only ever inserted (source_changes has no key), so loaders never wait for
-- each other, never deadlock over them, and never wait for a date, nor a date for them
-- (it reads them from its own snapshot, record_sources.sql). Inserts and deletes are
-- noted once per statement (a bulk load or COPY writes one note per date it touched);
-- updates per row, and only when the row really changed; a truncate notes every date
-- ever built. The function runs as its owner, with the pipeline's schema (then pg_temp)
-- as search_path and in UTC (sqlrun's dates are UTC days), so a loader with another
-- search_path, time zone or no rights on the state store is noted all the same.
-- sqlrun installs this when a model first declares the source, and again when this text
-- changes or a trigger is missing.
{% set t = source.table %}
{% set f = source.function %}
{% set date = source.date_column %}
{% import "system/common.sql" as common %}
{% macro touch(rows) %}
        INSERT INTO source_changes (source, ds, changed_at)
        SELECT DISTINCT {{ t }}, touched.ds, now()
        FROM (
{% if rows %}
            SELECT CAST(r.{{ date|ident }} AS date) AS ds FROM {{ rows|ident }} AS r
{% else %}
            SELECT CAST(OLD.{{ date|ident }} AS date) AS ds
            UNION ALL
            SELECT CAST(NEW.{{ date|ident }} AS date)
{% endif %}
{% if source.key %}
            UNION ALL
            SELECT CAST(other.{{ date|ident }} AS date)
            FROM {{ t|ident }} AS other
            WHERE other.{{ source.key|ident }} IN (
{%- if rows %}SELECT r.{{ source.key|ident }} FROM {{ rows|ident }} AS r
{%- else %}OLD.{{ source.key|ident }}, NEW.{{ source.key|ident }}{% endif %})
{% endif %}
        ) AS touched
        WHERE touched.ds IS NOT NULL;
{% endmacro %}
CREATE OR REPLACE FUNCTION {{ f|ident }}() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET TimeZone = 'UTC'
AS $sqlrun$
BEGIN
    IF TG_OP = 'INSERT' THEN
{{ touch("sqlrun_new") }}
    ELSIF TG_OP = 'DELETE' THEN
{{ touch("sqlrun_old") }}
    ELSIF TG_OP = 'UPDATE' THEN
{{ touch(none) }}
    ELSE
        -- TRUNCATE: every date built so far may have lost rows.
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
    FOR EACH ROW WHEN (OLD.* IS DISTINCT FROM NEW.*) EXECUTE FUNCTION {{ f|ident }}();
CREATE TRIGGER sqlrun_truncate AFTER TRUNCATE ON {{ t|ident }}
    FOR EACH STATEMENT EXECUTE FUNCTION {{ f|ident }}();
