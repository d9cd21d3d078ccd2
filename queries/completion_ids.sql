-- For shell completion (`COMPLETE=bash sqlrun`): the latest runs and seal events with a
-- word on each, newest first. `what` is 'run' or 'seal'.
SELECT r.run_id, r.kind || ' ' || r.interval_start || '..' || r.interval_end || ' ' || r.status
FROM runs r
WHERE :what = 'run'
UNION ALL
SELECT e.seal_id, e.action || ' ' || e.first_ds || '..' || e.last_ds || ': ' || coalesce(e.reason, '')
FROM seal_events e
WHERE :what = 'seal'
ORDER BY 1 DESC
LIMIT 30
