-- Every object of the pipeline is found in, and created in, its schema; temporary
-- objects come last, so a session's temporary table never stands in for the pipeline's
-- (the source triggers' function keeps this search_path: SET search_path FROM CURRENT).
SELECT set_config('search_path', quote_ident(:schema) || ', pg_temp', false)
