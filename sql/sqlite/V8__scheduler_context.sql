-- The scheduler that started a run, by its own ids (Airflow: the DAG, the task, the DAG
-- run id and the try number, from its AIRFLOW_CTX_* variables), so that the audit trail
-- leads to the scheduler's log of that run without any flag. NULL: started by hand.
ALTER TABLE runs ADD COLUMN scheduler TEXT;
ALTER TABLE runs ADD COLUMN scheduler_job TEXT;
ALTER TABLE runs ADD COLUMN scheduler_task TEXT;
ALTER TABLE runs ADD COLUMN scheduler_run TEXT;
ALTER TABLE runs ADD COLUMN scheduler_try INTEGER;
