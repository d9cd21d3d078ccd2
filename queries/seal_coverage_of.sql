-- What one seal event covered: each model and date.
SELECT c.model, c.ds
FROM seal_coverage c
WHERE c.seal_id = :seal_id
ORDER BY c.model, c.ds
