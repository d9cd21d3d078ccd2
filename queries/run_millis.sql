-- How long each run from :oldest on took, in milliseconds (runs.took_ms: the runner's
-- own measure; started_at and finished_at are whole seconds). Runs from before the
-- column, or not ended, have none.
SELECT r.run_id, r.took_ms
FROM runs r
WHERE r.run_id >= :oldest AND r.took_ms IS NOT NULL
