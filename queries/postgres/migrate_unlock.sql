SELECT pg_advisory_unlock(hashtext('sqlrun migrate ' || :schema))
