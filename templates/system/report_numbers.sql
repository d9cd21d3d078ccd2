-- name: report_numbers
-- version: 1
--
-- What report_dates.sql and report_weeks.sql share: a model's numbers per date, as true
-- now (<table>_current). `measures`: the value columns shown, each with `how`: 'sum' (it
-- adds up over a date's keys: pipeline/measures.rs) or 'one' (the date is the key: its
-- one value as it is). Imported as `n`.
{% macro now_per_date(model, measures, start, end) %}
SELECT c.{{ model.date_column|ident }} AS ds,
       count(*) AS keys
       {% for m in measures %}
       , {% if m.how == "sum" %}sum{% else %}max{% endif %}(c.{{ m.column|ident }}) AS {{ ("now_" ~ m.column)|ident }}
       {% endfor %}
FROM {{ model.current_view|ident }} AS c
WHERE c.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
GROUP BY c.{{ model.date_column|ident }}
{% endmacro %}
