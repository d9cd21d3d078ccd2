-- name: sent_table
-- version: 1
--
-- Every model gets <table>_sent: what went out, one row per key (the date and the
-- model's other key columns) of every sealed date, with every value column and the run
-- that computed it. `sqlrun seal` fills it in the seal's own transaction (seal.sql) and
-- nothing writes it again: corrections go to <table>_corrections, what is true now is
-- <table>_current. One table per model, like <table>_corrections, rather than more
-- columns in seals: seals has one row per date and the contract fixes its columns, while
-- a model may have any key and any values.
--
-- Made as a copy of the model's table, so its columns are typed as the model's are
-- (PostgreSQL: the same types; SQLite: the same affinity) on both backends with the same
-- SQL. Created the first time the model is synced, it starts with the model's rows of the
-- dates already sealed: a sealed date's rows in the model's table are exactly what went
-- out, since they are never replaced after the seal.
CREATE TABLE {{ model.sent_table|ident }} AS
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id
FROM {{ model.table|ident }} AS t
WHERE t.{{ model.date_column|ident }} IN (SELECT s.ds FROM seals AS s);
CREATE UNIQUE INDEX {{ (model.sent_table ~ "_by_key")|ident }}
    ON {{ model.sent_table|ident }} ({{ model.key|idents }});
