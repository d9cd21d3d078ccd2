SELECT cumulative_revenue FROM cumulative_revenue_as_sent ORDER BY ds DESC LIMIT 1
