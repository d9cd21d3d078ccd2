-- Which run holds a date of a span now, if any (read without a lock, so never waited
-- for): a seal of a week's or a month's first day asks it of the days up to its last,
-- where a run's cascade builds it.
SELECT run_id FROM reservations WHERE ds >= :first AND ds <= :last ORDER BY ds LIMIT 1
