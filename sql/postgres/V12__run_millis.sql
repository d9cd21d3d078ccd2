-- How long a run took, in milliseconds: see sql/sqlite/V12__run_millis.sql.
ALTER TABLE runs ADD COLUMN took_ms bigint;
