-- name: source_tracking
-- version: 5
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
-- ever built.
--
-- What a loader pays is the lookup of its rows' keys. After an insert the new rows are in
-- the table, so one join of the new rows with the table's rows of the same key gives
-- their own dates and their other versions' dates at once (a row whose key is NULL meets
-- nobody and keeps its own date): one pass over the new rows, a hash join for a bulk
-- load and an index probe for one row. The rows a delete took are gone from the table,
-- so their own dates are added to their key's remaining dates. Neither dedups the keys
-- first: the dates are few, and DISTINCT over them is cheap (a semi-join's dedup of 365k
-- keys spilled to disk and cost a COPY 2.6 times a plain table's time; see
-- docs/postgres/loaders.md), once it hashes the dates alone (with the source's name and
-- the time beside them, it took twice as long).
-- A key's other rows matter only when the table holds rows besides the statement's own.
-- So a big insert into a table that held none (a first load) notes its rows' own dates
-- alone, without the join, which was most of what tracking cost that COPY: the table's
-- rows are counted up to one more than the statement inserted (a scan that stops there).
-- A statement of at most 1000 rows skips the count (its join is a few index probes). The
-- test is the rows themselves, not who wrote them: a row an earlier statement of the same
-- transaction wrote (a batch before, a rewrite, an update that noted nothing) means the
-- join. (Version 4 asked whether any row was older than the transaction, by xmin, and so
-- missed such a row's other versions.)
--
-- The function runs as its owner, with the pipeline's schema (then pg_temp) as
-- search_path and in UTC (sqlrun's dates are UTC days), so a loader with another
-- search_path, time zone or no rights on the state store is noted all the same.
-- sqlrun installs this when a model first declares the source, and again when this text
-- changes or a trigger is missing.
{% set t = source.table %}
{% set f = source.function %}
{% set date = source.date_column %}
{% import "system/common.sql" as common %}
{% macro touch(rows, inserted=false, own=false) %}
        INSERT INTO source_changes (source, ds, changed_at)
        SELECT {{ t }}, touched.ds, now()
        FROM (SELECT DISTINCT found.ds FROM (
{% if rows and own %}
            SELECT CAST(r.{{ date|ident }} AS date) AS ds FROM {{ rows|ident }} AS r
{% elif rows and inserted and source.key %}
            SELECT CAST(coalesce(other.{{ date|ident }}, r.{{ date|ident }}) AS date) AS ds
            FROM {{ rows|ident }} AS r
            LEFT JOIN {{ t|ident }} AS other ON other.{{ source.key|ident }} = r.{{ source.key|ident }}
{% elif rows %}
            SELECT CAST(r.{{ date|ident }} AS date) AS ds FROM {{ rows|ident }} AS r
{% if source.key %}
            UNION ALL
            SELECT CAST(other.{{ date|ident }} AS date)
            FROM {{ rows|ident }} AS r
            JOIN {{ t|ident }} AS other ON other.{{ source.key|ident }} = r.{{ source.key|ident }}
{% endif %}
{% else %}
            SELECT CAST(OLD.{{ date|ident }} AS date) AS ds
            UNION ALL
            SELECT CAST(NEW.{{ date|ident }} AS date)
{% if source.key %}
            UNION ALL
            SELECT CAST(other.{{ date|ident }} AS date)
            FROM {{ t|ident }} AS other
            WHERE other.{{ source.key|ident }} IN (OLD.{{ source.key|ident }}, NEW.{{ source.key|ident }})
{% endif %}
{% endif %}
        ) AS found WHERE found.ds IS NOT NULL) AS touched;
{% endmacro %}
CREATE OR REPLACE FUNCTION {{ f|ident }}() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT SET TimeZone = 'UTC'
AS $sqlrun$
DECLARE
    statement_rows bigint;
BEGIN
    IF TG_OP = 'INSERT' THEN
{% if source.key %}
        SELECT count(*) INTO statement_rows FROM sqlrun_new;
        IF statement_rows > 1000
           AND (SELECT count(*) FROM (SELECT FROM {{ t|ident }} LIMIT statement_rows + 1) AS held)
               = statement_rows THEN
{{ touch("sqlrun_new", own=true) }}
        ELSE
{{ touch("sqlrun_new", true) }}
        END IF;
{% else %}
{{ touch("sqlrun_new", true) }}
{% endif %}
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
