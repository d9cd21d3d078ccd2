-- The dates a run holds that can be given up now, locked for that (release, the end of a
-- run): all but a date whose transaction is in flight this instant, which has its
-- reservation row locked (own_reservation.sql) and gives it up itself when it commits or
-- fails. SKIP LOCKED: a release never waits for another runner's date, however long.
SELECT ds FROM reservations WHERE run_id = :run_id ORDER BY ds FOR UPDATE SKIP LOCKED
