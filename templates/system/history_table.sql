-- name: history_table
-- version: 1
--
-- Every model gets <table>_history: the rows each replace took out of the model's
-- table (system/replace.sql copies them here in the date's own transaction), with the
-- run that built them (run_id, as it was), the run that replaced them (replaced_by) and
-- when (replaced_at, the database's clock). "What did this date say before run R" is
-- `WHERE replaced_by = R`; `sqlrun diff` and `sqlrun undo` read it, and the retention
-- (`[history] keep` in sqlrun.toml) prunes it in the same transactions that add to it.
--
-- Made as a copy of the model's table, so its columns are typed as the model's are on
-- both backends with the same SQL (as <table>_sent is).
{% import "system/dialect.sql" as d %}
CREATE TABLE {{ model.history_table|ident }} AS
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id,
       t.run_id AS replaced_by, {{ d.now() }} AS replaced_at
FROM {{ model.table|ident }} AS t
WHERE 1 = 0;
CREATE INDEX {{ (model.history_table ~ "_by_date")|ident }}
    ON {{ model.history_table|ident }} ({{ model.date_column|ident }}, replaced_by);
