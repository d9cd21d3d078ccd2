-- name: source_has_rows
-- version: 1
--
-- Whether a source's table holds any row (a table that exists with other columns than its
-- declaration may be made again only when empty).
SELECT EXISTS (SELECT 1 FROM {{ table|ident }}) AS has_rows
