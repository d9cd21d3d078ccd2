-- name: monthly_revenue
-- version: 1
-- grain: month
-- key: ds
-- values: revenue
-- depends_on: daily_revenue
-- create: CREATE TABLE monthly_revenue (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
--
-- The demo's chapter 7: a month (ds its first day) of the days as they are true now. It is
-- derived from the days, never added to: a backfill of a day rebuilds it (the cascade).
SELECT {{ period_start }} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue_current
WHERE ds >= {{ period_start }} AND ds < {{ period_end }}
