-- `apply --run`: a reserved run starts; from now on its process is its holder.
UPDATE runs
SET status = 'running', started_at = datetime('now'), keep_going = :keep_going,
    templates_from = :templates_from, sqlrun_version = :version,
    host = :host, pid = :pid, pid_started = :pid_started
WHERE run_id = :run_id AND status = 'reserved'
