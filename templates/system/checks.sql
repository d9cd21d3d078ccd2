-- name: checks
-- version: 1
--
-- Generic checks, imported by a check file as `check` (see checks/ for how).
-- Each is one SELECT of the rows that are wrong, over the check's model on its date:
-- they read the check's `model`, `this` (the model's rows as they stand now) and `ds`.
-- A threshold is a SQL value given as a parameter; every value becomes a literal.
{% import "system/dialect.sql" as d %}
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
