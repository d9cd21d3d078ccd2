-- This session's counts of the rows it changed, handed to the server's statistics now
-- (when it next goes idle, which is at the end of this statement) rather than within a
-- second or so: counted after the ANALYZE that follows, a load's own rows would show as
-- changed since it (n_mod_since_analyze), and the next `apply` would analyze again.
-- PostgreSQL 15 and later; before, the counts arrive when they do.
DO $sqlrun$
BEGIN
    IF CAST(current_setting('server_version_num') AS integer) >= 150000 THEN
        EXECUTE 'SELECT pg_stat_force_next_flush()';
    END IF;
EXCEPTION WHEN insufficient_privilege THEN
    NULL;
END
$sqlrun$
