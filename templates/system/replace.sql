-- name: replace
-- version: 1
--
-- Whole-partition replacement of one model for one date: delete the date's rows,
-- insert what the model's SELECT says the date is now.
DELETE FROM {{ model.table|ident }} WHERE {{ model.date_column|ident }} = {{ ds }};
INSERT INTO {{ model.table|ident }} ({{ model.columns|idents }}, "run_id")
SELECT {{ model.columns|idents }}, {{ run_id }}
FROM (
{% include model.template %}
) AS model_rows;
