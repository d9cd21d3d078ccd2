-- name: seal
-- version: 2
--
-- Seal dates whose numbers went out. Only dates not sealed yet are passed in: a
-- sealed date stays as it was. The models' rows for a sealed date are never replaced
-- again; a model that declares `seal_values` also copies them into seals.
{% import "system/dialect.sql" as d %}
INSERT INTO seals (ds, sealed_at, sealed_by, reason)
SELECT s.value, {{ d.now() }}, {{ by }}, {{ reason }}
FROM {{ d.dates(dates) }} AS s
WHERE NOT EXISTS (SELECT 1 FROM seals WHERE seals.ds = s.value);
{% for model in models if model.seal_values %}

UPDATE seals
SET ({{ model.seal_values|idents }}) = (
        SELECT {{ model.seal_values|idents }}
        FROM {{ model.table|ident }} AS t
        WHERE t.{{ model.date_column|ident }} = seals.ds)
WHERE seals.ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
{% endfor %}
