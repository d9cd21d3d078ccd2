-- name: model_versions
-- version: 1
--
-- A model's partitions at a point of its history (`sqlrun diff --model M --from A --to
-- B`): each version of a partition's rows is in the model's table (built by its run_id,
-- standing now) or in <table>_history (built by run_id, replaced by replaced_by). The
-- rows as they stood once run R was done are the versions built by R or before and not
-- replaced by then (run ids grow with time, and a date is written by one run at a time).
-- History is kept for `[history] keep`: a partition's versions are known back to the run
-- that built the oldest one kept, which `known_from` says (0: all of them, the oldest
-- record being the partition's first build). Imported as `v`.
{#- The rows of `model` as they stood once run `run` was done, of date `ds` if given:
    its columns, and `ds` (the date column, for grouping). #}
{% macro as_of(model, run, ds=none) %}
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.{{ model.date_column|ident }} AS sqlrun_ds
FROM {{ model.table|ident }} AS t
WHERE t.run_id <= {{ run }}{% if ds is not none %} AND t.{{ model.date_column|ident }} = {{ ds }}{% endif +%}
UNION ALL
SELECT {% for c in model.columns %}h.{{ c|ident }}, {% endfor %}h.{{ model.date_column|ident }}
FROM {{ model.history_table|ident }} AS h
WHERE h.run_id <= {{ run }} AND h.replaced_by > {{ run }}{% if ds is not none %} AND h.{{ model.date_column|ident }} = {{ ds }}{% endif +%}
{% endmacro %}
{#- The oldest run whose rows of the date in column `sqlrun_ds` of row `a` history still
    knows: 0 when its oldest kept record is the partition's first build; else the run that
    built the oldest version kept; with no record at all (built before history was kept),
    the run whose rows stand in the table. #}
{% macro known_from(model, a) %}coalesce(
    (SELECT coalesce(k.run_id, 0) FROM replaced_partitions AS k
      WHERE k.model = {{ "models/" ~ model.name }} AND k.ds = {{ a|ident }}.sqlrun_ds
      ORDER BY k.replaced_by LIMIT 1),
    (SELECT max(n.run_id) FROM {{ model.table|ident }} AS n
      WHERE n.{{ model.date_column|ident }} = {{ a|ident }}.sqlrun_ds),
    0){% endmacro %}
