-- name: source_tracking
-- version: 1
--
-- The triggers that keep source_versions for one source (PostgreSQL). Every insert,
-- delete, real update or truncate of source rows moves on the version of the rows'
-- dates, and, when the source has a key (the versions of one record share it, as a
-- re-sent order shares its order_id), the version of every date the record's other rows
-- are on: a re-sent order that moves to another date changes both dates.
--
-- Inserts and deletes are counted once per statement (a bulk load or COPY costs one
-- upsert, dates in ascending order so that two loaders never deadlock); updates per row,
-- and only when the row really changed; a truncate marks every date of the source. A
-- date's transaction never waits for these counters, nor they for it: it reads them from
-- its own snapshot (record_sources.sql). The function runs as its owner with the
-- pipeline's schema as search_path, so a loader with another search_path or without
-- rights on the state store is tracked all the same. sqlrun installs this when a model
-- first declares the source, and again when this text changes or a trigger is missing.
{% set t = source.table %}
{% set f = "sqlrun_changes_" ~ t %}
{% set date = source.date_column %}
{% macro touch(rows) %}
        INSERT INTO source_versions AS v (source, ds, version, changed_at)
        SELECT {{ t }}, touched.ds, 1, now()
        FROM (
{% if rows %}
            SELECT CAST(r.{{ date|ident }} AS date) AS ds FROM {{ rows|ident }} AS r
{% else %}
            SELECT CAST(OLD.{{ date|ident }} AS date) AS ds
            UNION
            SELECT CAST(NEW.{{ date|ident }} AS date)
{% endif %}
{% if source.key %}
            UNION
            SELECT CAST(other.{{ date|ident }} AS date)
            FROM {{ t|ident }} AS other
            WHERE other.{{ source.key|ident }} IN (
{%- if rows %}SELECT r.{{ source.key|ident }} FROM {{ rows|ident }} AS r
{%- else %}OLD.{{ source.key|ident }}, NEW.{{ source.key|ident }}{% endif %})
{% endif %}
        ) AS touched
        WHERE touched.ds IS NOT NULL
        ORDER BY touched.ds
        ON CONFLICT (source, ds) DO UPDATE SET version = v.version + 1, changed_at = excluded.changed_at;
{% endmacro %}
CREATE OR REPLACE FUNCTION {{ f|ident }}() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $sqlrun$
BEGIN
    IF TG_OP = 'INSERT' THEN
{{ touch("sqlrun_new") }}
    ELSIF TG_OP = 'DELETE' THEN
{{ touch("sqlrun_old") }}
    ELSIF TG_OP = 'UPDATE' THEN
{{ touch(none) }}
    ELSE
        -- TRUNCATE: every date the source had rows on or that was built from it.
        INSERT INTO source_versions AS v (source, ds, version, changed_at)
        SELECT {{ t }}, known.ds, 1, now()
        FROM (SELECT s.ds FROM source_versions AS s WHERE s.source = {{ t }}
              UNION
              SELECT p.ds FROM partition_sources AS p WHERE p.source = {{ t }}) AS known
        ORDER BY known.ds
        ON CONFLICT (source, ds) DO UPDATE SET version = v.version + 1, changed_at = excluded.changed_at;
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
