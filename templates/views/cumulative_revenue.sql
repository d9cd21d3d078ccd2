-- name: cumulative_revenue
-- version: 1
--
-- The running total, derived from the daily rows (corrections applied) every
-- time it is read: never stored, never added to, so no backfill can double it.
SELECT ds,
       revenue,
       sum(revenue) OVER (ORDER BY ds ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS cumulative_revenue
FROM daily_revenue_current
