-- Late data, found rather than guessed. Every source a model declares (`-- sources:`)
-- gets triggers (system/source_tracking.sql) that note, for every insert, delete or real
-- update of a row, the dates whose result it can change: a row in source_changes. A
-- date's transaction takes (deletes) the notes of its dates that it can see, in the same
-- transaction as its rows: a date with notes left is `changed`. On PostgreSQL loaders
-- only ever insert notes, so they never wait for each other or for a date.

CREATE TABLE source_changes (
    source      TEXT NOT NULL,
    ds          TEXT NOT NULL,
    changed_at  TEXT NOT NULL
);
-- One note per source and date is enough (SQLite's writers take turns, so this key
-- costs no waiting; PostgreSQL's table has no key, see its V5).
CREATE UNIQUE INDEX source_changes_by_date ON source_changes (source, ds);

-- Per date and source: the run that last built the date from it, and how many change
-- notes that build took (for the audit trail).
CREATE TABLE partition_sources (
    ds       TEXT NOT NULL,
    source   TEXT NOT NULL,
    changes  INTEGER NOT NULL,
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
