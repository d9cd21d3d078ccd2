-- `apply --run`: a reserved run starts; from now on its process is its holder.
UPDATE runs
SET status = 'running', started_at = CURRENT_TIMESTAMP, keep_going = :keep_going,
    templates_from = :templates_from, sqlrun_version = :version,
    host = :host, pid = :pid, pid_started = :pid_started, dialect = :dialect,
    selected_models = :selected, jobs = :jobs
WHERE run_id = :run_id AND status = 'reserved'
