-- name: current_view
-- version: 2
--
-- <table>_current: what is true now. A sealed row as sent, unless a correction
-- supersedes it (the latest one per key wins); keys that only a correction knows are
-- added, keys a correction removed are dropped. `corrected` flags corrected rows.
{% import "system/dialect.sql" as d %}
CREATE VIEW {{ model.current_view|ident }} AS
WITH latest AS (
    SELECT c.*
    FROM {{ model.corrections_table|ident }} AS c
    WHERE c.correction_id = (
            SELECT max(c2.correction_id)
            FROM {{ model.corrections_table|ident }} AS c2
            WHERE {% for k in model.key %}{% if not loop.first %} AND {% endif %}c2.{{ k|ident }} {{ d.same() }} c.{{ k|ident }}{% endfor %})
)
SELECT {% for k in model.key %}t.{{ k|ident }}, {% endfor %}
{% for v in model.values %}
       CASE WHEN l.correction_id IS NULL THEN t.{{ v|ident }} ELSE l.{{ v|ident }} END AS {{ v|ident }},
{% endfor %}
       l.correction_id IS NOT NULL AS corrected
FROM {{ model.table|ident }} AS t
LEFT JOIN latest AS l
  ON {% for k in model.key %}{% if not loop.first %} AND {% endif %}l.{{ k|ident }} {{ d.same() }} t.{{ k|ident }}{% endfor %}

WHERE l.removed IS NOT TRUE
UNION ALL
SELECT {% for c in model.columns %}l.{{ c|ident }}, {% endfor %}TRUE AS corrected
FROM latest AS l
WHERE NOT l.removed
  AND NOT EXISTS (SELECT 1 FROM {{ model.table|ident }} AS t
                  WHERE {% for k in model.key %}{% if not loop.first %} AND {% endif %}t.{{ k|ident }} {{ d.same() }} l.{{ k|ident }}{% endfor %})
