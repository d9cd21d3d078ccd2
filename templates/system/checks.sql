-- name: checks
-- version: 3
--
-- Generic checks, imported by a check file as `check` (see checks/ for how).
-- Each is one SELECT of the rows that are wrong, over the check's model on its date:
-- they read the check's `model`, `this` (the model's rows as they stand now),
-- `previous` (the rows this run took out of the date: see previous_version) and `ds`.
-- A threshold is a SQL value given as a parameter; every value becomes a literal.
--
-- Version 2: `previous` and change_against_previous, a gate on the change a run makes.
-- Version 3: stored_version, what `previous` is in a preview (`apply --diff`).
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{#- The body of the relation a check reads as `previous` (check.sql and date_checks.sql
    make it a CTE of the check's statement): the model's columns as the date held them
    before the run `run_id` wrote it, read in the date's own transaction.
    - A replaced date: the rows this run's replace just moved to <table>_history
      (replaced_by = run_id). None when the date was never built: a first build has no
      previous version.
    - A sealed date, which is corrected, not replaced: the values as they stood before
      this run (what `this`, the `_current` view, said before its corrections): the
      current rows of the keys this run did not correct, and for the keys it corrected
      the values its correction rows supersede (`previous_<value>`; a key the correction
      added, whose previous values are all NULL, was not there before). A model that
      the date's seal does not cover is replaced there, and reads its history as above.
    - Outside a run (`sqlrun check`, `render`: run_id 0) nothing replaced anything: on
      an ordinary date it is empty, on a sealed date the current values. #}
{% macro previous_version(model, sealed) %}
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}h.{{ c|ident }}{% endfor %}

FROM {{ model.history_table|ident }} AS h
WHERE h.{{ model.date_column|ident }} = {{ ds }} AND h.replaced_by = {{ run_id }}
{% if sealed %}
UNION ALL
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}v.{{ c|ident }}{% endfor %}

FROM {{ model.current_view|ident }} AS v
WHERE v.{{ model.date_column|ident }} = {{ ds }}
  AND NOT EXISTS (SELECT 1 FROM replaced_partitions AS rp
                  WHERE rp.replaced_by = {{ run_id }} AND rp.model = {{ "models/" ~ model.name }}
                    AND rp.ds = {{ ds }})
  AND NOT EXISTS (SELECT 1 FROM {{ model.corrections_table|ident }} AS k
                  WHERE k.{{ model.date_column|ident }} = {{ ds }} AND k.run_id = {{ run_id }}
                    AND {{ common.same_key(model, "k", "v", d.same()) }})
UNION ALL
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}{% if c in model.values %}k.{{ ("previous_" ~ c)|ident }} AS {{ c|ident }}{% else %}k.{{ c|ident }}{% endif %}{% endfor %}

FROM {{ model.corrections_table|ident }} AS k
WHERE k.{{ model.date_column|ident }} = {{ ds }} AND k.run_id = {{ run_id }}
  AND ({% for v in model.values %}{% if not loop.first %} OR {% endif %}k.{{ ("previous_" ~ v)|ident }} IS NOT NULL{% endfor %})
{% endif %}
{% endmacro %}
{#- `previous` in a preview (`apply --diff`, system/preview.sql), which replaces nothing:
    what the run would replace, the date's rows as stored now: its table's, or where the run
    would correct the model (a sealed date its seal covers, `corrected`) its `_current`
    view's, read through `schema` past the preview's temporary stand-ins for them. #}
{% macro stored_version(model, corrected, schema) %}
SELECT {% for c in model.columns %}{% if not loop.first %}, {% endif %}s.{{ c|ident }}{% endfor %}

FROM {{ schema|ident }}.{{ (model.current_view if corrected else model.table)|ident }} AS s
WHERE s.{{ model.date_column|ident }} = {{ ds }}
{% endmacro %}
{#- Rows of the date where any of `columns` is NULL. #}
{% macro not_null(columns) %}
SELECT t.*
FROM {{ this }} AS t
WHERE t.{{ model.date_column|ident }} = {{ ds }}
  AND ({% for c in columns %}{% if not loop.first %} OR {% endif %}t.{{ c|ident }} IS NULL{% endfor %})
{% endmacro %}
{#- Key values (default: the model's key) that more than one row of the date has. #}
{% macro unique_key(columns=none) %}
{% set key = columns if columns is not none else model.key %}
SELECT {{ key|idents }}, count(*) AS rows_with_key
FROM {{ this }} AS t
WHERE t.{{ model.date_column|ident }} = {{ ds }}
GROUP BY {{ key|idents }}
HAVING count(*) > 1
{% endmacro %}
{#- Rows of the date whose `column` is below `min` or above `max` (either may be left out). #}
{% macro accepted_range(column, min=none, max=none) %}
SELECT t.*
FROM {{ this }} AS t
WHERE t.{{ model.date_column|ident }} = {{ ds }}
  AND ({% if min is not none %}t.{{ column|ident }} < {{ min }}{% endif %}{% if min is not none and max is not none %} OR {% endif %}{% if max is not none %}t.{{ column|ident }} > {{ max }}{% endif %})
{% endmacro %}
{#- One row when the date's row count is below `min` or above `max`. #}
{% macro row_count(min=none, max=none) %}
SELECT n.row_count
FROM (SELECT count(*) AS row_count
      FROM {{ this }} AS t
      WHERE t.{{ model.date_column|ident }} = {{ ds }}) AS n
WHERE {% if min is not none %}n.row_count < {{ min }}{% endif %}{% if min is not none and max is not none %} OR {% endif %}{% if max is not none %}n.row_count > {{ max }}{% endif %}
{% endmacro %}
{#- One row when the date has fewer than `n` rows. #}
{% macro min_rows(n) %}{{ row_count(min=n) }}{% endmacro %}
{#- One row when the date's total of `column` differs from the average total of the
    `days` dates before it by more than `ratio` times that average ("revenue fell 90%
    overnight": ratio=0.9). Earlier dates are read from the model's table (a sealed
    date as sent: a heuristic needs no corrections, and the table plans in half the
    time of `_current`), and only those this run does not compute: the run's own dates are not all committed while
    it runs (with --jobs, one may be in flight beside this one), so comparing with them
    would depend on the order. A regular run compares yesterday with the week before; in
    a backfill the dates near its start compare with the days before it. Dates with no
    rows are left out; with none at all, nothing is compared. #}
{% macro change_against_recent(column, ratio, days=7) %}
SELECT today.total, round(recent.average_total, 2) AS recent_average,
       recent.dates AS recent_dates
FROM (SELECT coalesce(sum(t.{{ column|ident }}), 0) AS total
      FROM {{ this }} AS t
      WHERE t.{{ model.date_column|ident }} = {{ ds }}) AS today,
     (SELECT avg(r.total) AS average_total, count(*) AS dates
      FROM (SELECT c.{{ model.date_column|ident }}, sum(c.{{ column|ident }}) AS total
            FROM {{ model.table|ident }} AS c
            WHERE c.{{ model.date_column|ident }} >= {{ d.days_before(ds, days) }}
              AND c.{{ model.date_column|ident }} < {{ ds }}
              AND NOT EXISTS (SELECT 1 FROM reservations AS h
                              WHERE h.ds = c.{{ model.date_column|ident }} AND h.run_id = {{ run_id }})
              AND NOT EXISTS (SELECT 1 FROM run_partitions AS p
                              WHERE p.ds = c.{{ model.date_column|ident }} AND p.run_id = {{ run_id }})
            GROUP BY c.{{ model.date_column|ident }}) AS r) AS recent
WHERE recent.dates > 0
  AND abs(today.total - recent.average_total) > CAST({{ ratio }} AS NUMERIC) * abs(recent.average_total)
{% endmacro %}
{#- One row when the date's total of `column` moved by more than `ratio` times the total
    of the version this run replaces (`previous`): "revenue may not move by more than 20%
    against the version it replaces" is ratio=0.2. Totals are sums over the date's rows
    (NULLs count as 0). A date with no previous rows (built for the first time, or empty
    before) passes. The move is measured against the previous total's absolute value, so
    a negative total (refunds) gates like a positive one of its size; a previous total of
    0 lets only 0 pass (any move away from nothing is more than any ratio of it). #}
{% macro change_against_previous(column, ratio) %}
SELECT now_total.total, before.total AS previous_total, before.previous_rows
FROM (SELECT coalesce(sum(t.{{ column|ident }}), 0) AS total
      FROM {{ this }} AS t
      WHERE t.{{ model.date_column|ident }} = {{ ds }}) AS now_total,
     (SELECT coalesce(sum(p.{{ column|ident }}), 0) AS total, count(*) AS previous_rows
      FROM {{ previous }} AS p) AS before
WHERE before.previous_rows > 0
  AND abs(now_total.total - before.total) > CAST({{ ratio }} AS NUMERIC) * abs(before.total)
{% endmacro %}
