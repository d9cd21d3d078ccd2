-- name: weekly_revenue
-- version: 1
-- grain: week
-- key: ds
-- values: revenue
-- depends_on: daily_revenue
-- create: CREATE TABLE weekly_revenue (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
--
-- The demo's chapter 7: a week (Monday to Sunday, ds its Monday) of the days as they are
-- true now (daily_revenue_current: a sealed day's corrections included).
SELECT {{ period_start }} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue_current
WHERE ds >= {{ period_start }} AND ds < {{ period_end }}
