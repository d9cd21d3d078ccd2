-- Late data, found rather than guessed: the same tables as on SQLite (see
-- sql/sqlite/V5__source_changes.sql for what each holds). source_changes has no key:
-- loaders only insert into it, so they never conflict with each other.

CREATE TABLE source_changes (
    source      text NOT NULL,
    ds          date NOT NULL,
    changed_at  timestamptz NOT NULL
);
CREATE INDEX source_changes_by_date ON source_changes (source, ds);

CREATE TABLE partition_sources (
    ds       date NOT NULL,
    source   text NOT NULL,
    changes  bigint NOT NULL,
    run_id   bigint NOT NULL,
    PRIMARY KEY (ds, source)
);

CREATE TABLE source_tracking (
    source        text PRIMARY KEY,
    triggers      bigint NOT NULL,
    install_sql   text NOT NULL,
    installed_at  timestamptz NOT NULL
);

ALTER TABLE runs ADD COLUMN lookback bigint;
