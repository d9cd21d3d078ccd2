SELECT max(run_id) AS run_id FROM runs
