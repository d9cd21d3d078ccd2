-- The state store: who ran what, when, which kind, with which template versions,
-- and how each date ended. It lives in the same file as the data so that a
-- partition and the record that says it was computed commit together.

CREATE TABLE runs (
    run_id          INTEGER PRIMARY KEY,
    kind            TEXT NOT NULL CHECK (kind IN ('regular', 'backfill')),
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
    only_filter     TEXT,          -- missing | failed | stale | NULL (every date)
    keep_going      INTEGER NOT NULL DEFAULT 0,
    command         TEXT,          -- the command line, for the audit trail
    templates_from  TEXT,          -- 'built-in' or the --templates folder
    sqlrun_version  TEXT,
    host            TEXT,          -- holder identity, to tell a dead process from a live one
    pid             INTEGER,
    pid_started     TEXT,          -- boot id + process start time: a reused pid is not the holder
    error           TEXT           -- a run-level error (not a date's)
);
CREATE INDEX runs_live ON runs (status) WHERE status IN ('reserved', 'running');

CREATE TABLE run_partitions (
    run_id       INTEGER NOT NULL,
    ds           TEXT NOT NULL,
    status       TEXT NOT NULL CHECK (status IN ('success', 'corrected', 'unchanged', 'skipped', 'failed')),
    held_by      INTEGER,
    error        TEXT,
    started_at   TEXT,
    finished_at  TEXT,
    PRIMARY KEY (run_id, ds)
);
-- Per-date history lookups (latest attempt, last build) must not scan all runs.
CREATE INDEX run_partitions_by_ds ON run_partitions (ds, run_id);

CREATE TABLE reservations (
    ds           TEXT PRIMARY KEY,        -- one holder per date, by construction
    run_id       INTEGER NOT NULL,
    reserved_at  TEXT NOT NULL,
    expires_at   TEXT
);
CREATE INDEX reservations_by_run ON reservations (run_id);

-- What happened to a run besides its dates: reservations taken, skips, reclaims,
-- releases. `other_run_id` is the run on the other side (the holder, the dead run).
CREATE TABLE run_events (
    event_id      INTEGER PRIMARY KEY,
    run_id        INTEGER NOT NULL,
    at            TEXT NOT NULL,
    event         TEXT NOT NULL,
    ds_start      TEXT,
    ds_end        TEXT,
    date_count    INTEGER,
    other_run_id  INTEGER,
    detail        TEXT
);
CREATE INDEX run_events_by_run ON run_events (run_id);
CREATE INDEX run_events_by_other ON run_events (other_run_id) WHERE other_run_id IS NOT NULL;

-- Every template version the first time it was used: its checksum and its text,
-- so "which SQL built this number" has an answer years later.
CREATE TABLE template_versions (
    name           TEXT NOT NULL,
    version        INTEGER NOT NULL,
    kind           TEXT NOT NULL,
    checksum       TEXT NOT NULL,
    body           TEXT NOT NULL,
    first_used_at  TEXT NOT NULL,
    first_run_id   INTEGER,
    PRIMARY KEY (name, version)
);

-- The template versions each run used. A date's builder is its latest
-- success/corrected/unchanged run, so this says which SQL built each date.
CREATE TABLE run_templates (
    run_id   INTEGER NOT NULL,
    name     TEXT NOT NULL,
    version  INTEGER NOT NULL,
    kind     TEXT NOT NULL,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE seals (
    ds           TEXT PRIMARY KEY,
    sealed_at    TEXT NOT NULL,
    sealed_by    TEXT NOT NULL,
    reason       TEXT NOT NULL,
    revenue      INTEGER,
    order_count  INTEGER
);
