-- name: daily_revenue
-- version: 2
-- table: daily_revenue
-- date_column: ds
-- key: ds
-- values: revenue, order_count
-- seal_values: revenue, order_count
-- sources: orders(order_date, key order_id)
--
-- One row per date, also for a date with no orders (revenue 0, order_count 0). Each
-- order counts once, in its latest version, on that version's date: the rule is the
-- view orders_latest (views/orders_latest.sql), shared by every model over orders.
-- (Version 1 wrote the same rule inline; the numbers are the same.)
SELECT {{ ds }} AS ds,
       coalesce(sum(o.amount), 0) AS revenue,
       count(*) AS order_count
FROM orders_latest AS o
WHERE o.order_date = {{ ds }}
