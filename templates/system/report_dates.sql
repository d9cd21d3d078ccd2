-- name: report_dates
-- version: 1
--
-- A model's numbers per date for `sqlrun report`, newest first: what is true now and, on
-- a date sealed for the model, what went out (<table>_sent_vs_now, its latest version)
-- and how many keys differ now. The dates from `recent` to `end`, and every earlier
-- sealed date of the interval whose numbers changed since they went out.
{% import "system/report_numbers.sql" as n %}
WITH now_rows AS (
{{ n.now_per_date(model, measures, start, end) }}
),
sent_rows AS (
SELECT s.{{ model.date_column|ident }} AS ds,
       sum(CASE WHEN s.state = 'unchanged' THEN 0 ELSE 1 END) AS changed_keys
       {% for m in measures %}
       , {% if m.how == "sum" %}sum{% else %}max{% endif %}(s.{{ ("sent_" ~ m.column)|ident }}) AS {{ ("sent_" ~ m.column)|ident }}
       {% endfor %}
FROM {{ model.sent_view|ident }} AS s
WHERE s.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
GROUP BY s.{{ model.date_column|ident }}
)
SELECT coalesce(w.ds, x.ds) AS ds,
       coalesce(w.keys, 0) AS keys,
       x.changed_keys
       {% for m in measures %}
       , w.{{ ("now_" ~ m.column)|ident }}, x.{{ ("sent_" ~ m.column)|ident }}
       {% endfor %}
FROM now_rows AS w
FULL JOIN sent_rows AS x ON x.ds = w.ds
WHERE coalesce(w.ds, x.ds) >= {{ recent }} OR x.changed_keys > 0
ORDER BY 1 DESC
