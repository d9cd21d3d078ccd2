-- How many dates a run computed at once: see sql/sqlite/V9__run_jobs.sql.
ALTER TABLE runs ADD COLUMN jobs integer;
