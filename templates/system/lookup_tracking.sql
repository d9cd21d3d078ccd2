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
-- The fact's rows are found by the column that holds the key: sqlrun indexes it, so a
-- change costs the probe of its key's rows, not a scan.
-- sqlrun installs these when a model first declares the lookup, and again when this
-- text changes or a trigger is missing.
{% import "system/dialect.sql" as d %}
{% set t = lookup.table %}
{% macro touch(row) %}
    INSERT INTO source_changes (source, ds, changed_at)
    SELECT {{ t }}, f.{{ lookup.fact_date|ident }}, {{ d.now() }}
    FROM {{ lookup.fact_rows|ident }} AS f
    WHERE f.{{ lookup.fact_column|ident }} = {% if row == "OLD" %}OLD{% else %}NEW{% endif %}.{{ lookup.key|ident }}
      AND f.{{ lookup.fact_date|ident }} IS NOT NULL
    ON CONFLICT (source, ds) DO NOTHING;
{% endmacro %}
CREATE INDEX IF NOT EXISTS {{ ("sqlrun_" ~ lookup.fact ~ "_by_" ~ lookup.fact_column)|ident }}
    ON {{ lookup.fact|ident }} ({{ lookup.fact_column|ident }});
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
{{ touch("NEW") }}
END;
