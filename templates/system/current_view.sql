-- name: current_view
-- version: 3
--
-- <table>_current: what is true now. A sealed row as sent, unless a correction
-- supersedes it (the latest one per key wins); keys that only a correction knows are
-- added, keys a correction removed are dropped. `corrected` flags corrected rows.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
CREATE VIEW {{ model.current_view|ident }} AS
WITH latest AS (
{{ common.latest_correction(model, d.same()) }}
)
SELECT {% for k in model.key %}t.{{ k|ident }}, {% endfor %}
{% for v in model.values %}
       CASE WHEN l.correction_id IS NULL THEN t.{{ v|ident }} ELSE l.{{ v|ident }} END AS {{ v|ident }},
{% endfor %}
       l.correction_id IS NOT NULL AS corrected
FROM {{ model.table|ident }} AS t
LEFT JOIN latest AS l
  ON {{ common.same_key(model, "l", "t", d.same()) }}
WHERE l.removed IS NOT TRUE
UNION ALL
SELECT {% for c in model.columns %}l.{{ c|ident }}, {% endfor %}TRUE AS corrected
FROM latest AS l
WHERE NOT l.removed
  AND NOT EXISTS (SELECT 1 FROM {{ model.table|ident }} AS t
                  WHERE {{ common.same_key(model, "t", "l", d.same()) }})
