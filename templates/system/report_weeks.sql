-- name: report_weeks
-- version: 1
--
-- A model's numbers per ISO week (from Monday) for `sqlrun report`, oldest first: how
-- many dates have rows, and each value column that adds up, summed over the week's
-- dates as true now. A column that does not add up (a running total, a count of days)
-- is left out: no week sums it.
{% import "system/dialect.sql" as d %}
{% import "system/report_numbers.sql" as n %}
WITH now_rows AS (
{{ n.now_per_date(model, measures, start, end) }}
)
SELECT {{ d.week_start("w") }} AS week,
       count(*) AS dates
       {% for m in measures %}{% if m.how == "sum" %}
       , sum(w.{{ ("now_" ~ m.column)|ident }}) AS {{ ("now_" ~ m.column)|ident }}
       {% endif %}{% endfor %}
FROM now_rows AS w
GROUP BY 1
ORDER BY 1
