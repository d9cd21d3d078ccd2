-- name: seal
-- version: 4
--
-- One seal event (`seal_id`, recorded just before by queries/insert_seal_event.sql):
-- `sqlrun seal` (a first version of the dates in `new`, and of models first computed on
-- dates sealed before) or `seal --reissue` (a new version of every date in `dates`).
-- `cover` says which dates of which model the event sends: they are recorded in
-- seal_coverage and their rows copied into the model's <table>_sent, never replaced
-- again. A reissue first settles the dates' open corrections (settle.sql), so the
-- model's table holds what is true now, and that is what it sends. `seals` describes
-- each date's latest version: a model that declares `seal_values` (the default model,
-- whose key is the date) copies its values there.
{% import "system/dialect.sql" as d %}
{% if reissue %}
{% include "system/settle.sql" %}
{% endif %}
{% for c in cover %}
INSERT INTO seal_coverage (seal_id, ds, model)
SELECT {{ seal_id }}, s.value, {{ c.model.name }}
FROM {{ d.dates(c.dates) }} AS s;
INSERT INTO {{ c.model.sent_table|ident }} ({{ c.model.columns|idents }}, run_id, seal_id)
SELECT {% for col in c.model.columns %}t.{{ col|ident }}, {% endfor %}t.run_id, {{ seal_id }}
FROM {{ c.model.table|ident }} AS t
WHERE t.{{ c.model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(c.dates) }} AS s);

{% endfor %}
{% if reissue %}
UPDATE seals
SET sealed_at = {{ d.now() }}, sealed_by = {{ by }}, reason = {{ reason }}
WHERE ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
{% else %}
INSERT INTO seals (ds, sealed_at, sealed_by, reason)
SELECT s.value, {{ d.now() }}, {{ by }}, {{ reason }}
FROM {{ d.dates(new) }} AS s;
{% endif %}
{% for c in cover if c.model.seal_values %}

UPDATE seals
SET ({{ c.model.seal_values|idents }}) = (
        SELECT {{ c.model.seal_values|idents }}
        FROM {{ c.model.table|ident }} AS t
        WHERE t.{{ c.model.date_column|ident }} = seals.ds)
WHERE seals.ds IN (SELECT s.value FROM {{ d.dates(c.dates) }} AS s);
{% endfor %}
