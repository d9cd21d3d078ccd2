-- name: common
-- version: 1
--
-- What several system templates say alike, said once here so that it cannot drift
-- apart. Imported as `c`, beside the dialect's `d`.
{#- The statuses of a date whose rows a run built (run_partitions.status): a date that
    was replaced (success) or, sealed, compared (corrected, unchanged). #}
{% macro built() %}('success', 'corrected', 'unchanged'){% endmacro %}
{#- Row `a` and row `b` of a model have the same key: `a.k1 op b.k1 AND ...`. `op` is
    the dialect's null-safe equality, d.same(), or in a FULL JOIN d.join_same(). #}
{% macro same_key(model, a, b, op) %}{% for k in model.key %}{% if not loop.first %} AND {% endif %}{{ a|ident }}.{{ k|ident }} {{ op }} {{ b|ident }}.{{ k|ident }}{% endfor %}{% endmacro %}
{#- The body of a CTE `latest`: each key's latest correction of the model (the highest
    correction_id wins), of one date when `ds` is given, else of every date. #}
{% macro latest_correction(model, op, ds=none) %}
    SELECT c.*
    FROM {{ model.corrections_table|ident }} AS c
    WHERE {% if ds is not none %}c.{{ model.date_column|ident }} = {{ ds }}
      AND {% endif %}c.correction_id = (
            SELECT max(c2.correction_id)
            FROM {{ model.corrections_table|ident }} AS c2
            WHERE {{ same_key(model, "c2", "c", op) }})
{%- endmacro %}
