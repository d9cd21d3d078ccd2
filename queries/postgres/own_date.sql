-- Fencing, the first statement of a date's transaction: it locks the date's reservation
-- row before the date writes, if the row is still this run's. A row another run holds is
-- never locked (nor waited for: a date of that run may have it locked for as long as it
-- takes); no row means the date is not this run's any more. A release or reclaim waits for
-- a row locked here only to delete it, and a runner whose session ended never gets here
-- again. With it, what the date starts from, in the same round trip (the seal check folded
-- into fencing): whether it is sealed, the transaction's start on the server's clock (the
-- date's start in its record), and the models its seal covers (comma separated; the others
-- are replaced there, not corrected).
-- The clock comes as text, so that the record keeps its microseconds (sqlrun reads a
-- timestamptz to the second, for display).
SELECT EXISTS (SELECT 1 FROM seals WHERE ds = :ds) AS sealed,
       CAST(CURRENT_TIMESTAMP AS text) AS started_at,
       (SELECT string_agg(m.model, ',') FROM sealed_models AS m WHERE m.ds = :ds) AS covered
FROM reservations AS r
WHERE r.ds = :ds AND r.run_id = :run_id
FOR UPDATE OF r
