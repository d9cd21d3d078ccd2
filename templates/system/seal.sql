-- name: seal
-- version: 3
--
-- Seal dates whose numbers went out. Only dates not sealed yet are passed in: a
-- sealed date stays as it was. Every model's rows of those dates are copied into its
-- <table>_sent (what went out, per key, see sent_table.sql) and are never replaced
-- again; a model that declares `seal_values` (the default model, whose key is the date)
-- also copies them into the contract's seals columns. The copies come first, so that
-- `NOT EXISTS (... seals ...)` keeps a date that was sealed before as it was sent.
{% import "system/dialect.sql" as d %}
{% for model in models %}
INSERT INTO {{ model.sent_table|ident }} ({{ model.columns|idents }}, run_id)
SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}t.run_id
FROM {{ model.table|ident }} AS t
WHERE t.{{ model.date_column|ident }} IN (SELECT s.value FROM {{ d.dates(dates) }} AS s)
  AND NOT EXISTS (SELECT 1 FROM seals WHERE seals.ds = t.{{ model.date_column|ident }});

{% endfor %}
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
