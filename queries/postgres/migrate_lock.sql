-- Runners started together on a new database migrate it one at a time.
SELECT pg_advisory_lock(hashtext('sqlrun migrate ' || :schema))
