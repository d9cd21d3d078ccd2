-- name: revenue_7d
-- version: 1
-- key: ds
-- values: revenue
-- depends_on: daily_revenue window -6..0
-- create: CREATE TABLE revenue_7d (ds DATE NOT NULL, revenue BIGINT NOT NULL,
--     run_id BIGINT NOT NULL, PRIMARY KEY (ds))
--
-- The demo's chapter 7: a 7-day rolling total, the day and the six before it. A change to
-- one day reaches the seven rolling dates that read it.
SELECT {{ ds }} AS ds, coalesce(sum(revenue), 0) AS revenue
FROM daily_revenue_current
WHERE ds >= {{ window_start }} AND ds < {{ window_end }}
