-- name: drop_view
-- version: 1
--
-- A view whose template changed is dropped and created again; views hold no data.
DROP VIEW IF EXISTS {{ name|ident }};
