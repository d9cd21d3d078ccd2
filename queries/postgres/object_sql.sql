-- Whether a table or view exists in the pipeline's schema; for a view, the text
-- sqlrun created it from ('' if not recorded).
SELECT coalesce((SELECT v.create_sql FROM sqlrun_views AS v WHERE v.name = :name), '')
WHERE to_regclass(quote_ident(:name)) IS NOT NULL
