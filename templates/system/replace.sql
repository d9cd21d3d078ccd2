-- name: replace
-- version: 2
--
-- Whole-partition replacement of one model for one date: delete the date's rows,
-- insert what the model's SELECT says the date is now. On a sealed date only a model
-- its seal does not cover (first computed there after the seal) is replaced: what
-- went out is corrected instead (correct.sql), never replaced.
{% import "system/common.sql" as common_r %}
DELETE FROM {{ model.table|ident }} WHERE {{ model.date_column|ident }} = {{ ds }}
{%- if sealed %} AND NOT {{ common_r.covered(model, ds) }}{% endif %};
INSERT INTO {{ model.table|ident }} ({{ model.columns|idents }}, "run_id")
SELECT {{ model.columns|idents }}, {{ run_id }}
FROM (
{% include model.template %}
) AS model_rows
{%- if sealed %} WHERE NOT {{ common_r.covered(model, ds) }}{% endif %};
