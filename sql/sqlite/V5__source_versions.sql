-- Late data, found rather than guessed. Every source a model declares (`-- sources:`)
-- gets triggers (system/source_tracking.sql) that move a per-date counter on whenever a
-- row a date reads is inserted, deleted or changed; a date records the counters it was
-- built from in the same transaction as its rows. A date whose counter moved on since
-- is `changed`.

-- Per source and date: how often the rows that date reads have changed.
CREATE TABLE source_versions (
    source      TEXT NOT NULL,
    ds          TEXT NOT NULL,
    version     INTEGER NOT NULL,
    changed_at  TEXT NOT NULL,
    PRIMARY KEY (source, ds)
);

-- Per date and source: the version its latest build read (no row: built before the
-- source was tracked, read as version 0).
CREATE TABLE partition_sources (
    ds       TEXT NOT NULL,
    source   TEXT NOT NULL,
    version  INTEGER NOT NULL,
    run_id   INTEGER NOT NULL,
    PRIMARY KEY (ds, source)
);

-- The triggers installed on each source: their SQL and how many there were, so that a
-- dropped, disabled or recreated source table is noticed (and its dates marked changed).
CREATE TABLE source_tracking (
    source        TEXT PRIMARY KEY,
    triggers      INTEGER NOT NULL,
    install_sql   TEXT NOT NULL,
    installed_at  TEXT NOT NULL
);

-- A regular run that also looked back N days for missing, failed and changed dates.
ALTER TABLE runs ADD COLUMN lookback INTEGER;
