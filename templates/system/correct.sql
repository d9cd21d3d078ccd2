-- name: correct
-- version: 4
--
-- A sealed date keeps its rows as sent. Recompute the model and compare it, key by
-- key, with the current values (the latest correction, else the sealed row). Each
-- difference becomes one correction row with the values it supersedes; a key that
-- vanished is a correction with removed = 1. Equal values write nothing, so the same
-- late data applied twice corrects once. A date's corrections are numbered in key
-- order (by the key expressions: a number printed here would be bound as a parameter,
-- and ORDER BY a parameter orders by nothing).
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
WITH recomputed AS (
{% include model.template %}
),
latest AS (
{{ common.latest_correction(model, d.same(), ds) }}
),
current_rows AS (
    SELECT {% for c in model.columns %}l.{{ c|ident }}, {% endfor %}1 AS present
    FROM latest AS l
    WHERE NOT l.removed
    UNION ALL
    SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}1 AS present
    FROM {{ model.table|ident }} AS t
    WHERE t.{{ model.date_column|ident }} = {{ ds }}
      AND NOT EXISTS (SELECT 1 FROM latest AS l
                      WHERE {{ common.same_key(model, "l", "t", d.same()) }})
),
new_rows AS (
    SELECT {% for c in model.columns %}r.{{ c|ident }}, {% endfor %}1 AS present FROM recomputed AS r
)
INSERT INTO {{ model.corrections_table|ident }}
    ({{ model.key|idents }}, {{ model.values|idents }}, {% for v in model.values %}{{ ("previous_" ~ v)|ident }}, {% endfor %}removed, run_id, corrected_at)
SELECT {% for k in model.key %}coalesce(n.{{ k|ident }}, c.{{ k|ident }}), {% endfor +%}
       {%+ for v in model.values %}n.{{ v|ident }}, {% endfor +%}
       {%+ for v in model.values %}c.{{ v|ident }}, {% endfor +%}
       n.present IS NULL, {{ run_id }}, {{ d.now() }}
FROM new_rows AS n
FULL JOIN current_rows AS c
  ON {{ common.same_key(model, "n", "c", d.join_same()) }}
WHERE n.present IS NULL
   OR c.present IS NULL
{% for v in model.values %}
   OR n.{{ v|ident }} {{ d.differs() }} c.{{ v|ident }}
{% endfor %}
ORDER BY {% for k in model.key %}{% if not loop.first %}, {% endif %}coalesce(n.{{ k|ident }}, c.{{ k|ident }}){% endfor %};
