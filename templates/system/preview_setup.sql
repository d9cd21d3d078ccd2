-- name: preview_setup
-- version: 1
--
-- `apply --diff`: the preview's temporary objects, made once, in a transaction of their
-- own (each date then in one of its own: system/preview.sql; they are dropped at the end:
-- system/preview_teardown.sql). Nothing is written to the pipeline's schema: only these,
-- which live in the session's temporary schema and go with it. For the N-th model a date
-- computes:
--   sqlrun_preview_N        its rows as the preview computes them, date after date, typed
--                           as its table's columns, with what `<table>_current` would say
--                           of each (`sqlrun_corrected`);
--   sqlrun_preview_N_dates  the dates computed so far; `replaced` 1 where the run would
--                           replace the date's rows, 0 where it would correct them (sealed);
--   two views named as the model's table and its `_current` view, which stand in for them
--   in the rest of the transaction: the stored rows of the dates not computed yet, then
--   the computed ones. A model downstream, a check, and a later date that reads an earlier
--   one (a look back, a running total) read the model by its name as the run would find it
--   there, with the dates before committed. The stored rows themselves are read through
--   `schema` (SQLite: main), which no temporary object hides.
-- SQLite finds a temporary object before the pipeline's of the same name; on PostgreSQL,
-- whose sqlrun sessions search pg_temp last, each date's transaction puts it first.
{% for p in previewed %}
{% with model = p.model, rows = "sqlrun_preview_" ~ loop.index, dates = "sqlrun_preview_" ~ loop.index ~ "_dates" %}
CREATE TEMP TABLE {{ rows|ident }} AS
SELECT {{ model.columns|idents }}, FALSE AS sqlrun_corrected
FROM {{ schema|ident }}.{{ model.table|ident }}
WHERE 1 = 0;
CREATE INDEX {{ (rows ~ "_ds")|ident }} ON {{ rows|ident }} ({{ model.date_column|ident }});
CREATE TEMP TABLE {{ dates|ident }} AS
SELECT t.{{ model.date_column|ident }} AS ds, 1 AS replaced
FROM {{ schema|ident }}.{{ model.table|ident }} AS t
WHERE 1 = 0;
CREATE TEMP VIEW {{ model.table|ident }} AS
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id
FROM {{ schema|ident }}.{{ model.table|ident }} AS t
WHERE NOT EXISTS (SELECT 1 FROM {{ dates|ident }} AS p
                  WHERE p.ds = t.{{ model.date_column|ident }} AND p.replaced = 1)
UNION ALL
SELECT {% for c in model.columns %}r.{{ c|ident }}, {% endfor %}NULL
FROM {{ rows|ident }} AS r
WHERE EXISTS (SELECT 1 FROM {{ dates|ident }} AS p
              WHERE p.ds = r.{{ model.date_column|ident }} AND p.replaced = 1);
CREATE TEMP VIEW {{ model.current_view|ident }} AS
SELECT {% for c in model.columns %}c.{{ c|ident }}, {% endfor %}c.corrected
FROM {{ schema|ident }}.{{ model.current_view|ident }} AS c
WHERE NOT EXISTS (SELECT 1 FROM {{ dates|ident }} AS p
                  WHERE p.ds = c.{{ model.date_column|ident }})
UNION ALL
SELECT {% for c in model.columns %}r.{{ c|ident }}, {% endfor %}r.sqlrun_corrected
FROM {{ rows|ident }} AS r;
{% endwith %}
{% endfor %}
