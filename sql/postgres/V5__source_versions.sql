-- Late data, found rather than guessed: the same tables as on SQLite (see
-- sql/sqlite/V5__source_versions.sql for what each holds).

CREATE TABLE source_versions (
    source      text NOT NULL,
    ds          date NOT NULL,
    version     bigint NOT NULL,
    changed_at  timestamptz NOT NULL,
    PRIMARY KEY (source, ds)
);

CREATE TABLE partition_sources (
    ds       date NOT NULL,
    source   text NOT NULL,
    version  bigint NOT NULL,
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
