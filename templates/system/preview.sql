-- name: preview
-- version: 1
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
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% import "system/diff.sql" as diff %}
{{ d.temp_first(schema) }}
{{ d.read_only() }}
{% for p in previewed %}
{% with model = p.model, rows = "sqlrun_preview_" ~ loop.index, dates = "sqlrun_preview_" ~ loop.index ~ "_dates", n = loop.index %}
-- sqlrun context: {{ model.name|ident }}
{% if sealed and model.name not in uncovered %}
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
INSERT INTO {{ dates|ident }} (ds, replaced) VALUES ({{ ds }}, 0);
{% else %}
{% set compared = model.table %}
INSERT INTO {{ dates|ident }} (ds, replaced) VALUES ({{ ds }}, 1);
INSERT INTO {{ rows|ident }} ({{ model.columns|idents }}, sqlrun_corrected)
SELECT {{ model.columns|idents }}, FALSE
FROM (
{% include model.template %}
) AS model_rows;
{% endif %}
{% set before %}
SELECT {% for c in model.columns %}b.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ schema|ident }}.{{ compared|ident }} AS b
WHERE b.{{ model.date_column|ident }} = {{ ds }}
{% endset %}
{% set after %}
SELECT {% for c in model.columns %}a.{{ c|ident }}{% if not loop.last %}, {% endif %}{% endfor %}
FROM {{ rows|ident }} AS a
WHERE a.{{ model.date_column|ident }} = {{ ds }}
{% endset %}
-- sqlrun rows: {{ ("diff_" ~ n)|ident }}
{{ diff.diff(model, p.measures, before, after) }};
{% endwith %}
{% endfor %}
{% include "system/date_checks.sql" %}
