-- name: daily_revenue
-- version: 1
-- table: daily_revenue
-- date_column: ds
-- key: ds
-- values: revenue, order_count
-- seal_values: revenue, order_count
-- sources: orders(order_date, key order_id)
--
-- One row per date, also for a date with no orders (revenue 0, order_count 0).
-- Several rows may share an order_id (a re-sent or amended record): the one with
-- the greatest created_at wins, ties going to the one inserted last (the larger
-- rowid), and the order counts on the date of its winning row. An older version
-- of an order that moved to another date does not count here any more.
--
-- Reads only this date's orders (orders_by_date) and, for each, looks for a newer
-- version by id (orders_by_id): the cost of a date does not grow with history.
SELECT {{ ds }} AS ds,
       coalesce(sum(o.amount), 0) AS revenue,
       count(*) AS order_count
FROM orders AS o
WHERE o.order_date = {{ ds }}
  AND NOT EXISTS (
        SELECT 1
        FROM orders AS newer
        WHERE newer.order_id = o.order_id
          AND (newer.created_at > o.created_at
               OR (newer.created_at = o.created_at AND newer.rowid > o.rowid)))
