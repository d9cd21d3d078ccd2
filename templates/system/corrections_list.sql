-- name: corrections_list
-- version: 5
--
-- A model's corrections as `sqlrun corrections` lists them, oldest first: its feed view
-- (corrections_feed.sql) on the dates of an interval, written at or after a time
-- (`--since TIMESTAMP`) or after a seal event (`--since SEAL`: at or after it, by the
-- newest seal event each correction saw).
{% import "system/dialect.sql" as d %}
SELECT f.correction_id,
       {% for k in model.key %}
       f.{{ k|ident }} AS {{ ("key_" ~ k)|ident }},
       {% endfor %}
       {% for v in model.values %}
       f.{{ ("sent_" ~ v)|ident }} AS {{ ("sent_" ~ v)|ident }},
       f.{{ ("previous_" ~ v)|ident }} AS {{ ("previous_" ~ v)|ident }},
       f.{{ v|ident }} AS {{ ("now_" ~ v)|ident }},
       {% endfor %}
       f.removed,
       f.cause,
       f.seal_id,
       f.after_seal_id,
       f.run_id,
       f.run_kind,
       f.run_by,
       f.corrected_at,
       f.settled_by,
       f.settled_action
FROM {{ model.feed_view|ident }} AS f
WHERE f.{{ model.date_column|ident }} BETWEEN {{ start }} AND {{ end }}
{% if since_seal is not none %}
  AND f.after_seal_id >= {{ since_seal }}
{% endif %}
{% if since_time is not none %}
  AND f.corrected_at >= {{ d.timestamp(since_time) }}
{% endif %}
ORDER BY f.correction_id
