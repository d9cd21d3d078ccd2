-- name: replace
-- version: 5
--
-- Whole-partition replacement of one model for one date: keep the date's rows in the
-- model's history, then delete them and insert what the model's SELECT says the date is
-- now.
--
-- History (version 2): the rows taken out go to <table>_history with the run that
-- replaces them, and replaced_partitions says that this run replaced this partition,
-- whose rows came from which run (NULL: never built) and model version, and how many there
-- were (so a
-- partition that held no rows is told apart from one whose history was pruned). Then the
-- partition's history is pruned by the project's retention (`[history] keep`: so many
-- days, or so many of the newest versions), here, in the transaction that adds to it:
-- one indexed delete per partition, and no job to schedule.
--
-- Version 4: the model's rows (and their history) are found by the partition column's
-- value, `period_start` (a date, or an hour's first instant); the bookkeeping
-- (replaced_partitions) stays by `ds`, the period's first day.
-- Undo (version 3): for a model in `restored` (`sqlrun undo RUN`: this run puts back the
-- rows RUN replaced), the rows come from its history (system/undo_rows.sql) instead of
-- its SELECT; the prune comes last, after they are read, so that it cannot take them
-- first. The undo keeps history too: an undo can itself be undone.
-- Version 5: whether the rows come from history is the part's own flag (`part.restored`),
-- not its model's name in the date's `restored`: a cascaded undo's date may put back a
-- month whose first day is another date, beside days it rebuilds by their SELECT.
{% import "system/dialect.sql" as d %}
{% set model_name = "models/" ~ model.name %}
INSERT INTO replaced_partitions (replaced_by, model, ds, run_id, version, row_count, replaced_at)
SELECT {{ run_id }}, {{ model_name }}, {{ ds }},
       coalesce((SELECT pm.run_id FROM partition_models AS pm
                  WHERE pm.ds = {{ ds }} AND pm.model = {{ model_name }}),
                max(t.run_id)),
       (SELECT pm.version FROM partition_models AS pm
         WHERE pm.ds = {{ ds }} AND pm.model = {{ model_name }}),
       count(*), {{ d.now() }}
FROM {{ model.table|ident }} AS t
WHERE t.{{ model.date_column|ident }} = {{ period_start }}
ON CONFLICT (model, ds, replaced_by) DO NOTHING;
INSERT INTO {{ model.history_table|ident }} ({{ model.columns|idents }}, run_id, replaced_by, replaced_at)
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id, {{ run_id }}, {{ d.now() }}
FROM {{ model.table|ident }} AS t
WHERE t.{{ model.date_column|ident }} = {{ period_start }};
DELETE FROM {{ model.table|ident }} WHERE {{ model.date_column|ident }} = {{ period_start }};
INSERT INTO {{ model.table|ident }} ({{ model.columns|idents }}, "run_id")
SELECT {{ model.columns|idents }}, {{ run_id }}
FROM (
{% if part.restored %}
{% include "system/undo_rows.sql" %}
{% else %}
{% include model.template %}
{% endif %}
) AS model_rows;
{% if keep_versions %}
DELETE FROM {{ model.history_table|ident }}
WHERE {{ model.date_column|ident }} = {{ period_start }}
  AND replaced_by NOT IN (SELECT k.replaced_by FROM replaced_partitions AS k
                          WHERE k.model = {{ model_name }} AND k.ds = {{ ds }}
                          ORDER BY k.replaced_by DESC LIMIT {{ keep_versions }});
DELETE FROM replaced_partitions
WHERE model = {{ model_name }} AND ds = {{ ds }}
  AND replaced_by NOT IN (SELECT k.replaced_by FROM replaced_partitions AS k
                          WHERE k.model = {{ model_name }} AND k.ds = {{ ds }}
                          ORDER BY k.replaced_by DESC LIMIT {{ keep_versions }});
{% else %}
DELETE FROM {{ model.history_table|ident }}
WHERE {{ model.date_column|ident }} = {{ period_start }} AND replaced_at < {{ d.ago(keep_seconds) }};
DELETE FROM replaced_partitions
WHERE model = {{ model_name }} AND ds = {{ ds }} AND replaced_at < {{ d.ago(keep_seconds) }};
{% endif %}
