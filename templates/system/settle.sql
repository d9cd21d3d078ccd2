-- name: settle
-- version: 1
--
-- A reissue or an unseal of `dates` (event `seal_id`): every live correction of those
-- dates (common.live) is folded into its model's table, so that the table holds what is true now
-- (<table>_current, whose rows do not change here), and is marked settled by the event.
-- The correction rows themselves stay as they were written: the history. Per key, the
-- latest open correction decides: removed deletes the row, a key the table has gets the
-- correction's values and run, a key only the correction knows is inserted.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% macro open_latest(model) %}({{ common.latest_correction(model, d.same()) }}){% endmacro %}
{% for model in models %}
DELETE FROM {{ model.table|ident }}
WHERE {{ model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(dates) }} AS s)
  AND EXISTS (SELECT 1 FROM {{ open_latest(model) }} AS l
               WHERE l.removed AND {{ common.same_key(model, "l", model.table, d.same()) }});
UPDATE {{ model.table|ident }}
SET ({{ model.values|idents }}, run_id) = (
        SELECT {% for v in model.values %}l.{{ v|ident }}, {% endfor %}l.run_id
        FROM {{ open_latest(model) }} AS l
        WHERE {{ common.same_key(model, "l", model.table, d.same()) }})
WHERE {{ model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(dates) }} AS s)
  AND EXISTS (SELECT 1 FROM {{ open_latest(model) }} AS l
               WHERE NOT l.removed AND {{ common.same_key(model, "l", model.table, d.same()) }});
INSERT INTO {{ model.table|ident }} ({{ model.columns|idents }}, run_id)
SELECT {% for c in model.columns %}l.{{ c|ident }}, {% endfor %}l.run_id
FROM {{ open_latest(model) }} AS l
WHERE l.{{ model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(dates) }} AS s)
  AND NOT l.removed
  AND NOT EXISTS (SELECT 1 FROM {{ model.table|ident }} AS t
                   WHERE {{ common.same_key(model, "t", "l", d.same()) }});
UPDATE {{ model.corrections_table|ident }}
SET settled_by = {{ seal_id }}
WHERE {{ model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(dates) }} AS s)
  AND {{ common.live(model, model.corrections_table) }};

{% endfor %}
