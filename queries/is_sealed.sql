-- Just before a date's transaction: whether the date is sealed, the database's time,
-- which the date's record gives as its start (on PostgreSQL the server's clock, as every
-- time in the audit trail, never a runner's), and the models its seal covers (comma
-- separated; the others are replaced there, not corrected).
SELECT EXISTS (SELECT 1 FROM seals WHERE ds = :ds) AS sealed, CURRENT_TIMESTAMP AS started_at,
       (SELECT string_agg(m.model, ',') FROM sealed_models AS m WHERE m.ds = :ds) AS covered
