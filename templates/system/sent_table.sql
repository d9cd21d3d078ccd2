-- name: sent_table
-- version: 2
--
-- Every model gets <table>_sent: what went out, one row per key (the date and the
-- model's other key columns) and seal version (seal_id: the seal or reissue that sent
-- it), with every value column and the run that computed it. `sqlrun seal` and
-- `seal --reissue` add to it in their own transaction (seal.sql) and nothing changes a
-- row of it again: corrections go to <table>_corrections, what is true now is
-- <table>_current, the versions with who sent them are <table>_sent_history. One table
-- per model, like <table>_corrections, rather than more columns in seals: seals has one
-- row per date and the contract fixes its columns, while a model may have any key and
-- any values.
--
-- Made as a copy of the model's table, so its columns are typed as the model's are
-- (PostgreSQL: the same types; SQLite: the same affinity) on both backends with the same
-- SQL. It starts with the model's rows of the dates sealed for it now (a database sealed
-- before this table existed): a sealed date's rows in the model's table are its latest
-- version sent.
CREATE TABLE {{ model.sent_table|ident }} AS
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id, CAST(NULL AS BIGINT) AS seal_id
FROM {{ model.table|ident }} AS t
WHERE 1 = 0;
INSERT INTO {{ model.sent_table|ident }} ({{ model.columns|idents }}, run_id, seal_id)
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id, m.seal_id
FROM {{ model.table|ident }} AS t
JOIN sealed_models AS m
  ON m.ds = t.{{ model.date_column|ident }} AND m.model = {{ model.name }};
CREATE UNIQUE INDEX {{ (model.sent_table ~ "_by_version")|ident }}
    ON {{ model.sent_table|ident }} ({{ model.key|idents }}, seal_id);
