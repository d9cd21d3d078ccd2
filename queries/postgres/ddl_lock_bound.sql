-- Before creating or replacing the pipeline's tables, views and triggers (inside the
-- bookkeeping transaction that syncs the pipeline): a DDL statement waits for every
-- transaction that reads the object, a date of another run among them, and while it waits
-- every new reader of the object queues behind it. So it waits at most 2 s, then the sync
-- is refused (nothing changed) and says why.
SET LOCAL lock_timeout = '2s';
