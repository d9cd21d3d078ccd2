-- name: preview
-- version: 2
--
-- `apply --diff`: one date as the run would compute it, in a transaction of its own that
-- writes only the temporary objects of system/preview_setup.sql (on PostgreSQL they are
-- found first by name, d.temp_first, and the server refuses any other write, d.read_only):
-- each model the date computes, in dependency order, into its temporary rows (never its
-- table), then what changed against what is there now
-- (system/diff.sql, kept as `diff_N` for the N-th model), then the date's checks over the
-- rows as the run would leave them (system/date_checks.sql). As in system/date.sql, a
-- model is replaced (its date's stored rows hidden first, so the model reads its own table
-- as the run's DELETE leaves it), or on a sealed date that its seal covers, recomputed and
-- compared with what is true now (`<table>_current`): the run would record corrections,
-- and the table keeps the rows as sent.
-- Version 2: the date's partitions (`parts`, as system/date.sql takes them): a pipeline of
-- other grains or windows previews the cascade, each week, month or rolling day on the
-- date it would be built on, with its own period; its rows found by the partition
-- column's value (`period_start`). `diff_N` is the N-th part's; `slots` names each model's
-- temporary objects (system/preview_setup.sql's N) and its measures.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% import "system/diff.sql" as diff %}
{{ d.temp_first(schema) }}
{{ d.read_only() }}
{% for part in parts %}
{% with model = part.model, ds = part.ds, next_ds = part.next_ds, prev_ds = part.prev_ds, ds_nodash = part.ds_nodash, period_start = part.period_start, period_end = part.period_end, window_start = part.window_start, window_end = part.window_end, slot = slots[part.model.name] %}
{% with rows = "sqlrun_preview_" ~ slot.n, dates = "sqlrun_preview_" ~ slot.n ~ "_dates", n = loop.index %}
-- sqlrun context: {{ model.name|ident }}
{% if part.sealed and model.name not in part.uncovered %}
{% set compared = model.current_view %}
INSERT INTO {{ rows|ident }} ({{ model.columns|idents }}, sqlrun_corrected)
SELECT {% for c in model.columns %}r.{{ c|ident }}, {% endfor %}
       (EXISTS (SELECT 1 FROM {{ schema|ident }}.{{ model.current_view|ident }} AS c
                 WHERE {{ common.same_key(model, "c", "r", d.same()) }} AND c.corrected)
        OR NOT EXISTS (SELECT 1 FROM {{ schema|ident }}.{{ model.current_view|ident }} AS c
                        WHERE {{ common.same_key(model, "c", "r", d.same()) }}{% for v in model.values %}
                          AND c.{{ v|ident }} {{ d.same() }} r.{{ v|ident }}{% endfor %}))
FROM (
{% include model.template %}
) AS r;
INSERT INTO {{ dates|ident }} (ds, replaced) VALUES ({{ period_start }}, 0);
{% else %}
{% set compared = model.table %}
INSERT INTO {{ dates|ident }} (ds, replaced) VALUES ({{ period_start }}, 1);
INSERT INTO {{ rows|ident }} ({{ model.columns|idents }}, sqlrun_corrected)
SELECT {{ model.columns|idents }}, FALSE
FROM (
{% include model.template %}
) AS model_rows;
{% endif %}
{% set before %}
SELECT {% for c in model.columns %}b.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ schema|ident }}.{{ compared|ident }} AS b
WHERE b.{{ model.date_column|ident }} = {{ period_start }}
{% endset %}
{% set after %}
SELECT {% for c in model.columns %}a.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ rows|ident }} AS a
WHERE a.{{ model.date_column|ident }} = {{ period_start }}
{% endset %}
-- sqlrun rows: {{ ("diff_" ~ n)|ident }}
{{ diff.diff(model, slot.measures, before, after) }};
{% endwith %}
{% endwith %}
{% endfor %}
{% include "system/date_checks.sql" %}
