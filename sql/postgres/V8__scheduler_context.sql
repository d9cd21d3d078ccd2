-- The scheduler that started a run: see sql/sqlite/V8__scheduler_context.sql.
ALTER TABLE runs ADD COLUMN scheduler text;
ALTER TABLE runs ADD COLUMN scheduler_job text;
ALTER TABLE runs ADD COLUMN scheduler_task text;
ALTER TABLE runs ADD COLUMN scheduler_run text;
ALTER TABLE runs ADD COLUMN scheduler_try bigint;
