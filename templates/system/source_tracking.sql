-- name: source_tracking
-- version: 1
--
-- The triggers that keep source_versions for one source (SQLite). Every insert, delete
-- or real update of a source row moves on the version of the row's date, and, when the
-- source has a key (the versions of one record share it, as a re-sent order shares its
-- order_id), the version of every date the record's other rows are on: a re-sent order
-- that moves to another date changes both dates. sqlrun installs these when a model
-- first declares the source, and again when this text changes or a trigger is missing.
{% import "system/dialect.sql" as d %}
{% set t = source.table %}
{% set date = source.date_column %}
{% macro touch(event) %}
    INSERT INTO source_versions (source, ds, version, changed_at)
    SELECT {{ t }}, touched.ds, 1, {{ d.now() }}
    FROM (
{% if event != "insert" %}
        SELECT OLD.{{ date|ident }} AS ds
        UNION
{% endif %}
{% if event != "delete" %}
        SELECT NEW.{{ date|ident }} AS ds
        UNION
{% endif %}
{% if source.key %}
        SELECT other.{{ date|ident }}
        FROM {{ t|ident }} AS other
        WHERE other.{{ source.key|ident }} IN (
{%- if event == "insert" %}NEW.{{ source.key|ident }}
{%- elif event == "delete" %}OLD.{{ source.key|ident }}
{%- else %}OLD.{{ source.key|ident }}, NEW.{{ source.key|ident }}{% endif %})
{% else %}
        SELECT NULL WHERE 0
{% endif %}
    ) AS touched
    WHERE touched.ds IS NOT NULL
    ON CONFLICT (source, ds) DO UPDATE SET version = version + 1, changed_at = excluded.changed_at;
{% endmacro %}
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_insert")|ident }};
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_delete")|ident }};
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_update")|ident }};
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_insert")|ident }} AFTER INSERT ON {{ t|ident }}
BEGIN
{{ touch("insert") }}
END;
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_delete")|ident }} AFTER DELETE ON {{ t|ident }}
BEGIN
{{ touch("delete") }}
END;
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_update")|ident }} AFTER UPDATE ON {{ t|ident }}
WHEN {% for c in columns %}{% if not loop.first %} OR {% endif %}OLD.{{ c|ident }} IS NOT NEW.{{ c|ident }}{% endfor %}

BEGIN
{{ touch("update") }}
END;
