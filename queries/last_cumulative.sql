SELECT cumulative_revenue FROM cumulative_revenue ORDER BY ds DESC LIMIT 1
