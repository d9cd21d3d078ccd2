-- What one seal version sent of daily_revenue between two dates (the demo's restatement).
SELECT coalesce(sum(revenue), 0) AS revenue FROM daily_revenue_sent
WHERE seal_id = :seal_id AND ds BETWEEN :start AND :end
