-- The end of a date's transaction (date_lock.sql).
SELECT pg_advisory_unlock_shared(CAST(CAST(CAST(current_schema() AS regnamespace) AS oid) AS integer), 0)
