-- name: ready
-- version: 1
--
-- Before a date is built: the models it computes whose sources are not ready for it
-- yet (each model's `-- ready:` condition, false on this date). No rows: it may be built.
-- sqlrun rows: ready
{% for m in models %}
{% if not loop.first %}
UNION ALL
{% endif %}
{% with model = m.model %}
SELECT CAST({{ m.name }} AS TEXT) AS model WHERE NOT (
{% include m.condition %}
)
{% endwith %}
{% endfor %}
