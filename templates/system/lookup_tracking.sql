-- name: lookup_tracking
-- version: 1
--
-- The triggers that note changes of one lookup (SQLite): a table without dates (customers,
-- products) that a model reaches from a dated source by a column holding the lookup's key
-- (`-- sources: orders(order_date), customers(key customer_id via orders.customer_id)`).
-- An insert, delete or real update of a lookup row notes, under the lookup's name, the
-- dates of the fact rows that hold its key now (the fact's `_latest` view when it is
-- declared with `-- latest_by:`, so an old version of an order that moved to another date
-- is not one of them): exactly the dates whose result the row can change. An update that
-- changes the key notes the old key's dates and the new key's. A key no fact row holds
-- notes nothing. A change of the fact's own column (an order moved to another customer) is
-- the fact's own tracking's (system/source_tracking.sql): its dates are noted there.
--
-- The fact's rows are found by the column that holds the key: sqlrun indexes it with the
-- date (sqlrun_<fact>_by_<column>), so a change reads its key's dates from the index, and
-- tests that a current row holds the key only on a date not noted yet: a change of many
-- keys at once (a reload of customers) costs about one index probe per order, not the
-- test of each order's versions (BENCHMARKS.md, "Lookups").
-- sqlrun installs these when a model first declares the lookup, and again when this
-- text changes or a trigger is missing.
{% import "system/dialect.sql" as d %}
{% set t = lookup.table %}
{% set fact = lookup.fact|ident %}
{% set col = lookup.fact_column|ident %}
{% set date = lookup.fact_date|ident %}
{#- The dates of the key's fact rows, each once, from the index on (column, date) alone;
    a date noted already is skipped before the costlier test that the key has a current
    row there (SQLite's writers take turns: a date that holds a note takes it with the
    data this change wrote). `row`: OLD or NEW; `only_if_other_key`: an update's new key,
    noted only when it is not the old one. The date is text as source_changes.ds is, so
    that the note is looked up by (source, ds) also when the fact's date column was
    declared DATE (NUMERIC affinity: compared as it is, the probe would read every note). #}
{% macro touch(row, only_if_other_key=false) %}
    INSERT INTO source_changes (source, ds, changed_at)
    SELECT {{ t }}, c.ds, {{ d.now() }}
    FROM (SELECT DISTINCT CAST(f.{{ date }} AS TEXT) AS ds
          FROM {{ fact }} AS f
          WHERE f.{{ col }} = {% if row == "OLD" %}OLD{% else %}NEW{% endif %}.{{ lookup.key|ident }}
            AND f.{{ date }} IS NOT NULL) AS c
    WHERE NOT EXISTS (SELECT 1 FROM source_changes AS s WHERE s.source = {{ t }} AND s.ds = c.ds)
{% if only_if_other_key %}
      AND OLD.{{ lookup.key|ident }} IS NOT NEW.{{ lookup.key|ident }}
{% endif %}
{% if lookup.fact_rows != lookup.fact %}
      AND EXISTS (SELECT 1 FROM {{ lookup.fact_rows|ident }} AS g
                  WHERE g.{{ col }} = {% if row == "OLD" %}OLD{% else %}NEW{% endif %}.{{ lookup.key|ident }}
                    AND g.{{ date }} = c.ds)
{% endif %}
    ON CONFLICT (source, ds) DO NOTHING;
{% endmacro %}
DROP INDEX IF EXISTS {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }};
CREATE INDEX {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }}
    ON {{ fact }} ({{ col }}, {{ date }});
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_insert")|ident }};
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_delete")|ident }};
DROP TRIGGER IF EXISTS {{ ("sqlrun_" ~ t ~ "_update")|ident }};
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_insert")|ident }} AFTER INSERT ON {{ t|ident }}
BEGIN
{{ touch("NEW") }}
END;
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_delete")|ident }} AFTER DELETE ON {{ t|ident }}
BEGIN
{{ touch("OLD") }}
END;
CREATE TRIGGER {{ ("sqlrun_" ~ t ~ "_update")|ident }} AFTER UPDATE ON {{ t|ident }}
WHEN {% for c in columns %}{% if not loop.first %} OR {% endif %}OLD.{{ c|ident }} IS NOT NEW.{{ c|ident }}{% endfor %}

BEGIN
{{ touch("OLD") }}
{{ touch("NEW", true) }}
END;
