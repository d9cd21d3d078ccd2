-- name: cumulative_revenue_as_sent
-- version: 2
--
-- What the reports showed: the running total over daily_revenue, where a sealed
-- date keeps the values as sent (corrections are not applied). `sealed` says
-- which dates actually went out.
SELECT d.ds,
       d.revenue,
       CAST(sum(d.revenue) OVER (ORDER BY d.ds ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS BIGINT) AS cumulative_revenue,
       EXISTS (SELECT 1 FROM seals AS s WHERE s.ds = d.ds) AS sealed
FROM daily_revenue AS d
