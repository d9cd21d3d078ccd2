-- What the pooler probe finds in the session it is given: its backend and the marker
-- (NULL or '' where no session set it).
SELECT pg_backend_pid()::text, current_setting('sqlrun.probe', true)
