-- name: corrections_list
-- version: 4
--
-- A model's corrections in an interval, oldest first: what was sent (<table>_sent; none
-- for a key the seal never saw), what each correction superseded, what it says now, and
-- by which run.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
SELECT c.correction_id,
       {% for k in model.key %}
       c.{{ k|ident }} AS {{ ("key_" ~ k)|ident }},
       {% endfor %}
       {% for v in model.values %}
       t.{{ v|ident }} AS {{ ("sent_" ~ v)|ident }},
       c.{{ ("previous_" ~ v)|ident }} AS {{ ("previous_" ~ v)|ident }},
       c.{{ v|ident }} AS {{ ("now_" ~ v)|ident }},
       {% endfor %}
       c.removed,
       c.run_id,
       c.corrected_at
FROM {{ model.corrections_table|ident }} AS c
LEFT JOIN {{ model.sent_table|ident }} AS t
  ON {{ common.same_key(model, "t", "c", d.same()) }}
WHERE c.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
ORDER BY c.correction_id
