-- What one run built, per model: how many partitions, the first and the last (the demo's
-- cascade, counted in the state store rather than taken from the plan).
SELECT model, count(*) AS partitions, min(ds) AS first_ds, max(ds) AS last_ds
FROM partition_models
WHERE run_id = :run_id
GROUP BY model
ORDER BY min(ds), model
