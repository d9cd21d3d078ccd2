-- name: source_latest
-- version: 1
--
-- A declared source's `<name>_latest` view (sources/NAME.sql with `-- key:` and
-- `-- latest_by:`): the current version of each key, the one rule every model over the
-- source shares. Several rows may share a key (a re-sent or amended record): the one with
-- the greatest latest_by wins, ties going to the row that arrived last (SQLite's rowid;
-- on PostgreSQL the rowid column sqlrun gives a declared source, system/source_arrival.sql).
--
-- A model reads it with a filter on the date or the key: both databases push that filter
-- into the view, so a date still reads only its own rows (an index on the date column)
-- and probes each one's newer versions by key (an index on key, latest_by). On PostgreSQL
-- the newer-version test is kept a subquery (`OFFSET 0`: the planner may not turn it into
-- an anti-join that hashes the whole history for each date; BENCHMARKS.md, "A date on
-- PostgreSQL"). The rows are those of views/orders_latest.sql version 2, which this
-- replaces for orders.
CREATE VIEW {{ source.latest_view|ident }} AS
SELECT {% for c in columns %}{% if not loop.first %}, {% endif %}o.{{ c|ident }}{% endfor %}

FROM {{ source.name|ident }} AS o
WHERE NOT EXISTS (
        SELECT 1
        FROM {{ source.name|ident }} AS newer
        WHERE newer.{{ source.key|ident }} = o.{{ source.key|ident }}
          AND (newer.{{ source.latest_by|ident }} > o.{{ source.latest_by|ident }}
               OR (newer.{{ source.latest_by|ident }} = o.{{ source.latest_by|ident }} AND newer.rowid > o.rowid))
{% if dialect == "postgres" %}
        OFFSET 0
{% endif %}
        )
