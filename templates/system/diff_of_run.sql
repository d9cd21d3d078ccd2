-- name: diff_of_run
-- version: 1
--
-- `sqlrun diff RUN`: what run `run_id` changed in one partition (`ds`) of one model, as
-- system/diff.sql counts it. Before: the rows the run replaced, which it kept in
-- <table>_history (`replaced_by` = the run). After: the rows the run wrote, in the model's
-- table while they are still there, else in <table>_history, replaced by a later run
-- (their `run_id` is the run's: only one of the two holds them).
{% import "system/diff.sql" as diff %}
{% set before %}
SELECT {% for c in model.columns %}h.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ model.history_table|ident }} AS h
WHERE h.{{ model.date_column|ident }} = {{ ds }} AND h.replaced_by = {{ run_id }}
{% endset %}
{% set after %}
SELECT {% for c in model.columns %}t.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ model.table|ident }} AS t
WHERE t.{{ model.date_column|ident }} = {{ ds }} AND t.run_id = {{ run_id }}
UNION ALL
SELECT {% for c in model.columns %}h.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ model.history_table|ident }} AS h
WHERE h.{{ model.date_column|ident }} = {{ ds }} AND h.run_id = {{ run_id }}
{% endset %}
{{ diff.diff(model, measures, before, after) }}
