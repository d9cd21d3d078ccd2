-- One model at a time (`--select`): see sql/sqlite/V7__partition_models.sql.
CREATE TABLE partition_models (
    ds       date NOT NULL,
    model    text NOT NULL,
    version  bigint NOT NULL,
    run_id   bigint NOT NULL,
    PRIMARY KEY (ds, model)
);

ALTER TABLE run_partitions ADD COLUMN failed_model text;

ALTER TABLE runs ADD COLUMN selected_models text;
