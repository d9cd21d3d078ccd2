SELECT max(run_id) FROM runs
