-- Events of a run, and reclaims it did of other runs.
SELECT event_id, run_id, at, event, ds_start, ds_end, date_count, other_run_id, detail
FROM run_events
WHERE run_id = :run_id OR other_run_id = :run_id
ORDER BY event_id
