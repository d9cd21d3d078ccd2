SELECT coalesce(sum(revenue), 0) AS revenue FROM daily_revenue_current WHERE ds BETWEEN :start AND :end
