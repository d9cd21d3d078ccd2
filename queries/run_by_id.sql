SELECT run_id, kind, interval_start, interval_end, requested_by, reason, status,
       created_at, started_at, finished_at, only_filter, keep_going, command,
       templates_from, sqlrun_version, host, pid, pid_started, error, dialect, lookback,
       scheduler, scheduler_job, scheduler_task, scheduler_run, scheduler_try, jobs
FROM runs
WHERE run_id = :run_id
