-- A new run. `status` is 'running' for apply, 'reserved' for reserve (whose `jobs` is
-- NULL until `apply --run` starts it).
INSERT INTO runs (kind, interval_start, interval_end, requested_by, reason, status,
                  created_at, started_at, only_filter, keep_going, command,
                  templates_from, sqlrun_version, host, pid, pid_started, dialect,
                  lookback, selected_models, scheduler, scheduler_job, scheduler_task,
                  scheduler_run, scheduler_try, jobs)
VALUES (:kind, :start, :end, :by, :reason, :status,
        CURRENT_TIMESTAMP, CASE WHEN :status = 'running' THEN CURRENT_TIMESTAMP END,
        :only, :keep_going, :command, :templates_from, :version, :host, :pid, :pid_started,
        :dialect, :lookback, :selected, :scheduler, :scheduler_job, :scheduler_task,
        :scheduler_run, :scheduler_try, :jobs)
RETURNING run_id
