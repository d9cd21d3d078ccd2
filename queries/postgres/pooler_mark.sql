-- The pooler probe's marker: a token only this session knows, set for the session (not
-- the transaction), with the backend that holds it. The server makes the token, so the
-- probe sends no value.
SELECT pg_backend_pid()::text,
       set_config('sqlrun.probe', md5(random()::text || clock_timestamp()::text || pg_backend_pid()::text), false)
