-- The checks that found rows on a date (checks/*.sql): one row per check, date and run.
-- A check that passed writes nothing. severity 'error': the date rolled back and was
-- recorded failed (this row is written with its failure record); 'warn': the date
-- committed with it. sample: a JSON array of the first failing rows, each an object of
-- column -> value; failing_rows: how many there were in all.
CREATE TABLE check_results (
    run_id       INTEGER NOT NULL,
    ds           TEXT NOT NULL,
    check_name   TEXT NOT NULL,
    model        TEXT NOT NULL,
    severity     TEXT NOT NULL CHECK (severity IN ('error', 'warn')),
    version      INTEGER NOT NULL,
    failing_rows INTEGER NOT NULL,
    sample       TEXT NOT NULL,
    checked_at   TEXT NOT NULL,
    PRIMARY KEY (run_id, ds, check_name)
);
CREATE INDEX check_results_by_date ON check_results (ds, run_id);
