-- Just before a date's transaction: whether the date is sealed, and the database's time,
-- which the date's record gives as its start (on PostgreSQL the server's clock, as every
-- time in the audit trail, never a runner's).
SELECT EXISTS (SELECT 1 FROM seals WHERE ds = :ds), CURRENT_TIMESTAMP
