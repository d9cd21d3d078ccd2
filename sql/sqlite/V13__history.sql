-- History: each replace keeps the rows it replaced (each model's <table>_history, made by
-- templates/system/history_table.sql) and says so here, one row per model and date a run
-- replaced, in the same transaction (templates/system/replace.sql). run_id is the run
-- whose rows were replaced (NULL: the partition had never been built), version the model
-- version that built them (what an undo records when it puts them back), row_count how
-- many rows that was. A row here with no rows in <table>_history is a partition that
-- held none, which tells it apart from one whose history the retention pruned (then this
-- row is gone too). `sqlrun diff` and `sqlrun undo` read it.
CREATE TABLE replaced_partitions (
    replaced_by  INTEGER NOT NULL,
    model        TEXT NOT NULL,          -- models/<name>, as partition_models names it
    ds           TEXT NOT NULL,
    run_id       INTEGER,
    version      INTEGER,               -- the model version that built them (NULL: unknown)
    row_count    INTEGER NOT NULL,
    replaced_at  TEXT NOT NULL,
    PRIMARY KEY (model, ds, replaced_by)
) WITHOUT ROWID;
-- One b-tree, clustered by partition: each replace adds one row beside its partition's
-- others (what the retention prunes), and a date's commit writes one page more, not three.
-- "What did run R replace" (diff, undo) reads the whole table, which holds a row per
-- partition and replace kept: a scan of thousands of short rows.

-- runs.kind gains `undo` (`sqlrun undo RUN`). SQLite cannot change a CHECK in place: the
-- table is made again with every column it has by now, in the same order, and its rows
-- copied. legacy_alter_table keeps the rename from checking the views that read `runs`
-- (they read it by name, and the name is the same again when the rename is done).
PRAGMA legacy_alter_table = ON;
CREATE TABLE runs_new (
    run_id          INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('regular', 'backfill', 'undo')),
    interval_start  TEXT NOT NULL,
    interval_end    TEXT NOT NULL,
    requested_by    TEXT NOT NULL,
    reason          TEXT,
    status          TEXT NOT NULL CHECK (status IN ('reserved', 'running', 'success', 'partial',
                                                     'failed', 'interrupted', 'released')),
    created_at      TEXT NOT NULL,
    started_at      TEXT,
    finished_at     TEXT,
    -- beyond the contract: how the run was asked for, and who holds it
    only_filter     TEXT,          -- missing | failed | stale | changed | NULL (every date)
    keep_going      INTEGER NOT NULL DEFAULT 0,
    command         TEXT,          -- the command line, for the audit trail
    templates_from  TEXT,          -- 'built-in' or the --templates folder
    sqlrun_version  TEXT,
    host            TEXT,          -- holder identity, to tell a dead process from a live one
    pid             INTEGER,
    pid_started     TEXT,          -- boot id + process start time: a reused pid is not the holder
    error           TEXT,          -- a run-level error (not a date's)
    dialect         TEXT,
    lookback        INTEGER,
    selected_models TEXT,
    scheduler       TEXT,
    scheduler_job   TEXT,
    scheduler_task  TEXT,
    scheduler_run   TEXT,
    scheduler_try   INTEGER,
    jobs            INTEGER,
    took_ms         INTEGER
);
INSERT INTO runs_new (run_id, kind, interval_start, interval_end, requested_by, reason, status, created_at, started_at, finished_at, only_filter, keep_going, command, templates_from, sqlrun_version, host, pid, pid_started, error, dialect, lookback, selected_models, scheduler, scheduler_job, scheduler_task, scheduler_run, scheduler_try, jobs, took_ms)
SELECT run_id, kind, interval_start, interval_end, requested_by, reason, status, created_at, started_at, finished_at, only_filter, keep_going, command, templates_from, sqlrun_version, host, pid, pid_started, error, dialect, lookback, selected_models, scheduler, scheduler_job, scheduler_task, scheduler_run, scheduler_try, jobs, took_ms
FROM runs;
DROP TABLE runs;
ALTER TABLE runs_new RENAME TO runs;
CREATE INDEX runs_live ON runs (status) WHERE status IN ('reserved', 'running');
PRAGMA legacy_alter_table = OFF;
