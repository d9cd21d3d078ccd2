-- History: each replace keeps the rows it replaced; see sql/sqlite/V13__history.sql.
CREATE TABLE replaced_partitions (
    replaced_by  bigint NOT NULL,
    model        text NOT NULL,
    ds           date NOT NULL,
    run_id       bigint,
    version      bigint,
    row_count    bigint NOT NULL,
    replaced_at  timestamptz NOT NULL,
    PRIMARY KEY (model, ds, replaced_by)
);
-- One index, by partition (what each replace and its retention read); "what did run R
-- replace" scans the table (see sql/sqlite/V13__history.sql).

-- runs.kind gains `undo` (`sqlrun undo RUN`).
ALTER TABLE runs DROP CONSTRAINT runs_kind_check;
ALTER TABLE runs ADD CONSTRAINT runs_kind_check CHECK (kind IN ('regular', 'backfill', 'undo'));
