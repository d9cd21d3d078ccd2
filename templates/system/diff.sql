-- name: diff
-- version: 1
--
-- What changed in one partition of one model between two versions of its rows, `before`
-- and `after` (each a SELECT of the model's columns, key then values): one row with how
-- many keys were added (only after has them), removed (only before) and changed (both
-- have them and a value differs, NULL-safe), how many rows each has, and per measure the
-- total before and after (`before_1`, `after_1`, ... in the order of `measures`): a value
-- column that adds up (pipeline/measures.rs) summed over the partition's keys, one that
-- does not but has one row per date its one value. The totals are taken over each side
-- alone, so a key that two rows share cannot count twice. Used by `apply --diff`
-- (system/preview.sql) and `sqlrun diff RUN` (system/diff_of_run.sql). Imported as `diff`.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{#- A measure's total over the rows `x` of one side: summed (none: 0), or the one value. #}
{% macro total(m, x) %}{% if m.how == "sum" %}coalesce(sum({{ x|ident }}.{{ m.column|ident }}), 0){% else %}max({{ x|ident }}.{{ m.column|ident }}){% endif %}{% endmacro %}
{% macro diff(model, measures, before, after) %}
WITH sqlrun_before AS (
{{ before }}
),
sqlrun_after AS (
{{ after }}
)
SELECT k.added, k.removed, k.changed, b.row_count AS rows_before, a.row_count AS rows_after
{% for m in measures %}
       , b.{{ ("m_" ~ loop.index)|ident }} AS {{ ("before_" ~ loop.index)|ident }}, a.{{ ("m_" ~ loop.index)|ident }} AS {{ ("after_" ~ loop.index)|ident }}
{% endfor %}
FROM (SELECT count(*) AS row_count{% for m in measures %}, {{ total(m, "x") }} AS {{ ("m_" ~ loop.index)|ident }}{% endfor %}
      FROM sqlrun_before AS x) AS b,
     (SELECT count(*) AS row_count{% for m in measures %}, {{ total(m, "x") }} AS {{ ("m_" ~ loop.index)|ident }}{% endfor %}
      FROM sqlrun_after AS x) AS a,
     (SELECT coalesce(sum(CASE WHEN o.sqlrun_present IS NULL THEN 1 ELSE 0 END), 0) AS added,
             coalesce(sum(CASE WHEN n.sqlrun_present IS NULL THEN 1 ELSE 0 END), 0) AS removed,
             coalesce(sum(CASE WHEN n.sqlrun_present = 1 AND o.sqlrun_present = 1
                                AND ({% for v in model.values %}{% if not loop.first %} OR {% endif %}n.{{ v|ident }} {{ d.differs() }} o.{{ v|ident }}{% endfor %})
                               THEN 1 ELSE 0 END), 0) AS changed
      FROM (SELECT {% for c in model.columns %}x.{{ c|ident }}, {% endfor %}1 AS sqlrun_present FROM sqlrun_after AS x) AS n
      FULL JOIN (SELECT {% for c in model.columns %}x.{{ c|ident }}, {% endfor %}1 AS sqlrun_present FROM sqlrun_before AS x) AS o
        ON {{ common.same_key(model, "n", "o", d.join_same()) }}) AS k
{% endmacro %}
