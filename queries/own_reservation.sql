-- Fencing: whether the date's reservation is still this run's (postgres/own_reservation.sql
-- also locks it; on SQLite the date's transaction holds the one write lock).
SELECT run_id FROM reservations WHERE ds = :ds AND run_id = :run_id
