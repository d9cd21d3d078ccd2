-- Fencing, the first statement of a date's transaction: a row only while the date's
-- reservation is still this run's (postgres/own_date.sql also locks it; on SQLite the
-- date's transaction holds the one write lock). With it, what the date starts from, in the
-- same round trip: whether it is sealed, the database's time (the date's start in its
-- record: on PostgreSQL the transaction's start on the server's clock), and the models its
-- seal covers (comma separated; the others are replaced there, not corrected).
SELECT EXISTS (SELECT 1 FROM seals WHERE ds = :ds) AS sealed, CURRENT_TIMESTAMP AS started_at,
       (SELECT string_agg(m.model, ',') FROM sealed_models AS m WHERE m.ds = :ds) AS covered
FROM reservations AS r
WHERE r.ds = :ds AND r.run_id = :run_id
