-- Fencing: a date's transaction locks the date's reservation row before it writes, if the
-- row is still this run's. A row another run holds is never locked (nor waited for: a
-- date of that run may have it locked for as long as it takes); no row means the date
-- is not this run's any more. A release or reclaim waits for a row locked here only to
-- delete it, and a runner whose session ended never gets here again.
SELECT run_id FROM reservations WHERE ds = :ds AND run_id = :run_id FOR UPDATE
