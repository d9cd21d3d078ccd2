-- name: orders_latest
-- version: 2
--
-- The latest version of each order, the one rule every model over orders shares.
-- Several rows may share an order_id (a re-sent or amended record): the one with the
-- greatest created_at wins, ties going to the row inserted last (the larger rowid), and
-- the order belongs to the date of its winning row. An older version of an order that
-- moved to another date is not here.
--
-- A model reads it with a filter on the date (`FROM orders_latest AS o WHERE
-- o.order_date = <the date>`): both databases push that filter into the view, so a date
-- still reads only its own orders (orders_by_date) and probes each one's newer versions
-- by id (orders_by_id); the cost of a date does not grow with history.
--
-- On PostgreSQL the newer-version test is kept a subquery (`OFFSET 0`: the planner may
-- not turn it into an anti-join): otherwise, on a short history (60 days, 63,000 orders),
-- it hashes every order of the history for each date, ten times what the index probes
-- cost (BENCHMARKS.md, "A date on PostgreSQL"). The rows are the same.
-- (Version 1 had no `OFFSET 0`.)
SELECT o.order_id, o.order_date, o.amount, o.created_at
FROM orders AS o
WHERE NOT EXISTS (
        SELECT 1
        FROM orders AS newer
        WHERE newer.order_id = o.order_id
          AND (newer.created_at > o.created_at
               OR (newer.created_at = o.created_at AND newer.rowid > o.rowid))
{% if dialect == "postgres" %}
        OFFSET 0
{% endif %}
        )
