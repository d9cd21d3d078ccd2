-- A date's revenue as sent (seals) and as true now (daily_revenue_current).
SELECT s.revenue AS sent_revenue, c.revenue AS current_revenue
FROM seals s JOIN daily_revenue_current c ON c.ds = s.ds
WHERE s.ds = :ds
