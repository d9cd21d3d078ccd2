-- Which run holds a date now, if any (read without a lock, so never waited for).
SELECT run_id FROM reservations WHERE ds = :ds
