-- name: source_tracking
-- version: 1
--
-- The triggers that note changes of one source (SQLite) in source_changes. Every
-- insert, delete or real update of a source row notes the row's date, and, when the
-- source has a key (the versions of one record share it, as a re-sent order shares its
-- order_id), every date the record's other rows are on: a re-sent order that moves to
-- another date changes both dates. A date that has a note already keeps it (one row per
-- source and date on SQLite, whose writers take turns anyway).
-- sqlrun installs these when a model first declares the source, and again when this
-- text changes or a trigger is missing.
{% import "system/dialect.sql" as d %}
{% set t = source.table %}
{% set date = source.date_column %}
{% set key = source.key %}
{# One statement per date or per other row of the record, and no UNION or DISTINCT: a
   statement that builds a temporary table costs a bulk load an allocation per row. A
   date noted already is left as it is (source_changes has one row per source and date
   on SQLite). #}
{% macro touch(event) %}
{% for row in (["OLD"] if event == "delete" else ["NEW"] if event == "insert" else ["OLD", "NEW"]) %}
    INSERT INTO source_changes (source, ds, changed_at)
    SELECT {{ t }}, {% if row == "OLD" %}OLD{% else %}NEW{% endif %}.{{ date|ident }}, {{ d.now() }}
    WHERE {% if row == "OLD" %}OLD{% else %}NEW{% endif %}.{{ date|ident }} IS NOT NULL
    ON CONFLICT (source, ds) DO NOTHING;
{% endfor %}
{% if key %}
    INSERT INTO source_changes (source, ds, changed_at)
    SELECT {{ t }}, other.{{ date|ident }}, {{ d.now() }}
    FROM {{ t|ident }} AS other
    WHERE other.{{ key|ident }} IN (
{%- if event == "insert" %}NEW.{{ key|ident }}
{%- elif event == "delete" %}OLD.{{ key|ident }}
{%- else %}OLD.{{ key|ident }}, NEW.{{ key|ident }}{% endif %})
      AND other.{{ date|ident }} IS NOT NULL
    ON CONFLICT (source, ds) DO NOTHING;
{% endif %}
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
