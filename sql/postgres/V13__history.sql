-- History: each replace keeps the rows it replaced; see sql/sqlite/V13__history.sql.
CREATE TABLE replaced_partitions (
    replaced_by  bigint NOT NULL,
    model        text NOT NULL,
    ds           date NOT NULL,
    run_id       bigint,
    row_count    bigint NOT NULL,
    replaced_at  timestamptz NOT NULL,
    PRIMARY KEY (replaced_by, model, ds)
);
CREATE INDEX replaced_partitions_by_date ON replaced_partitions (model, ds, replaced_by);

-- runs.kind gains `undo` (`sqlrun undo RUN`).
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('regular', 'backfill', 'undo'));
