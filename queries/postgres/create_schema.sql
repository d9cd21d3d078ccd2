-- The DDL that creates the pipeline's schema when it is missing (the server quotes the
-- name); no row when it exists.
SELECT format('CREATE SCHEMA %I', CAST(:schema AS text))
WHERE to_regnamespace(quote_ident(:schema)) IS NULL
