-- name: seal
-- version: 1
--
-- Seal dates whose numbers went out. Only dates not sealed yet are passed in: a
-- sealed date stays as it was. The models' rows for a sealed date are never replaced
-- again; a model that declares `seal_values` also copies them into seals.
INSERT INTO seals (ds, sealed_at, sealed_by, reason)
SELECT s.value, datetime('now'), {{ by }}, {{ reason }}
FROM json_each({{ dates }}) AS s
WHERE NOT EXISTS (SELECT 1 FROM seals WHERE seals.ds = s.value);
{% for model in models if model.seal_values %}

UPDATE seals
SET ({{ model.seal_values|idents }}) = (
        SELECT {{ model.seal_values|idents }}
        FROM {{ model.table|ident }} AS t
        WHERE t.{{ model.date_column|ident }} = seals.ds)
WHERE seals.ds IN (SELECT value FROM json_each({{ dates }}));
{% endfor %}
