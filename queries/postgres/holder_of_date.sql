-- Fencing: a date's transaction locks the date's reservation row before it writes and
-- checks that it is still this run's. A reclaim or release waits for it, and a runner
-- whose session ended never gets here again.
SELECT run_id FROM reservations WHERE ds = :ds FOR UPDATE
