-- name: diff_between
-- version: 1
--
-- `sqlrun diff --model M --from A --to B`: the partitions of one model that either point
-- has rows of (within `start`..`end` when given), in date order, each with the oldest run
-- history knows it from (system/model_versions.sql; a point before it is not known whole)
-- when `ds` is none; else one partition compared (system/diff.sql): before, the rows as
-- they stood once run `from_run` was done; after, once run `to_run` was.
{% import "system/diff.sql" as diff %}
{% import "system/model_versions.sql" as v %}
{% if ds is none %}
SELECT p.sqlrun_ds AS ds, {{ v.known_from(model, "p") }} AS known_from
FROM (SELECT a.sqlrun_ds FROM ({{ v.as_of(model, from_run) }}) AS a
      UNION
      SELECT b.sqlrun_ds FROM ({{ v.as_of(model, to_run) }}) AS b) AS p
{% if start is not none %}
WHERE p.sqlrun_ds BETWEEN {{ start }} AND {{ end }}
{% endif %}
ORDER BY p.sqlrun_ds
{% else %}
{% set before %}
SELECT {% for c in model.columns %}a.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM ({{ v.as_of(model, from_run, ds) }}) AS a
{% endset %}
{% set after %}
SELECT {% for c in model.columns %}b.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM ({{ v.as_of(model, to_run, ds) }}) AS b
{% endset %}
{{ diff.diff(model, measures, before, after) }}
{% endif %}
