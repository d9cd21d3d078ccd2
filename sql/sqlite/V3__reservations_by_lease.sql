-- Each date's commit renews its run's lease on the dates it still holds
-- (record_date.sql: WHERE run_id = ? AND expires_at < ?). With an index on run_id
-- alone that reads every held date, once per date: quadratic over a long backfill.
-- Keyed by (run_id, expires_at) it reads only the rows due for renewal.
-- WITHOUT ROWID: the date is the key, so releasing a date touches one b-tree less.

CREATE TABLE reservations_new (
    ds           TEXT PRIMARY KEY,
    run_id       INTEGER NOT NULL,
    reserved_at  TEXT NOT NULL,
    expires_at   TEXT
) WITHOUT ROWID;
INSERT INTO reservations_new (ds, run_id, reserved_at, expires_at)
SELECT ds, run_id, reserved_at, expires_at FROM reservations;
DROP TABLE reservations;
ALTER TABLE reservations_new RENAME TO reservations;
CREATE INDEX reservations_by_run ON reservations (run_id, expires_at);
