-- Provisional partitions: see sql/sqlite/V15__provisional.sql.
ALTER TABLE partition_models ADD COLUMN provisional boolean NOT NULL DEFAULT false;
