-- name: source_arrival
-- version: 1
--
-- A declared source with `-- latest_by:` breaks ties between versions of a key by arrival:
-- the row that arrived last wins. SQLite keeps the arrival order in every table (rowid);
-- on PostgreSQL sqlrun adds it as a column that comes last and fills itself, so an
-- INSERT that lists the declared columns alone works as before (orders has had it since
-- sql/postgres/V2). Rows already there are numbered in the order the table holds them.
ALTER TABLE {{ table|ident }} ADD COLUMN rowid bigint GENERATED ALWAYS AS IDENTITY
