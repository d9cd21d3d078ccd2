-- The server may end sessions idle longer than its idle_session_timeout (PostgreSQL 14+;
-- managed services set it): sqlrun's sessions wait idle by design (a run's own session
-- while its workers compute, the pooler probe's two sessions while the other looks), so
-- this session is exempt. Sent first, before any wait; a server without the setting is
-- left alone.
SELECT set_config('idle_session_timeout', '0', false)
WHERE current_setting('idle_session_timeout', true) IS NOT NULL
