-- name: cumulative_revenue
-- version: 2
--
-- The running total, derived from the daily rows (corrections applied) every
-- time it is read: never stored, never added to, so no backfill can double it.
-- (The cast keeps it a whole number on PostgreSQL, whose sum of bigint is numeric.)
SELECT ds,
       revenue,
       CAST(sum(revenue) OVER (ORDER BY ds ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT) AS cumulative_revenue
FROM daily_revenue_current
