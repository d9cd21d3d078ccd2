-- What a run wrote to daily_revenue: what an additive cumulative would add.
SELECT coalesce(sum(revenue), 0) AS revenue FROM daily_revenue WHERE run_id = :run_id
