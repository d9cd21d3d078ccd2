-- How long a run took, in milliseconds, from its start to its end as the runner's own
-- monotonic clock measured it: started_at and finished_at are whole seconds (the
-- contract's format), which reads `0s` for most runs. NULL: a run from before this
-- column, or one that has not ended (or ended without recording it: found dead).
ALTER TABLE runs ADD COLUMN took_ms INTEGER;
