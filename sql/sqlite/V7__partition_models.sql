-- One model at a time (`--select`): each date records which version of each model built
-- its rows, in the same transaction, so a date whose models were built by different runs
-- still tells which of them are stale or missing. Dates built before this migration fall
-- back to the model versions their last run used (run_templates).
CREATE TABLE partition_models (
    ds       TEXT NOT NULL,
    model    TEXT NOT NULL,          -- models/<name>, as template_versions names it
    version  INTEGER NOT NULL,
    run_id   INTEGER NOT NULL,
    PRIMARY KEY (ds, model)
);

-- The model whose statement failed, for a failed date (NULL: not a model's statement).
ALTER TABLE run_partitions ADD COLUMN failed_model TEXT;

-- The models a run was asked for (`--select`; NULL: all of them).
ALTER TABLE runs ADD COLUMN selected_models TEXT;
