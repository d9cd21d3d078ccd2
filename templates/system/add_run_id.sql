-- name: add_run_id
-- version: 1
--
-- A model's table needs a run_id column, which sqlrun fills with the run that computed
-- each row. A table created from a model's `-- create:` without one gets it here, in
-- the same transaction; for a table that exists already, the refusal prints this
-- statement for whoever owns the table to run.
ALTER TABLE {{ table|ident }} ADD COLUMN run_id {% if dialect == "postgres" %}bigint{% else %}INTEGER{% endif %}
