-- name: ready
-- version: 1
--
-- Before a date is built: the models it computes whose sources are not ready for it
-- yet (each model's `-- ready:` condition, false or NULL on this date: a watermark row
-- the loader has not written yet is not ready). No rows: it may be built.
-- sqlrun rows: ready
-- sqlrun context: "ready"
{% for m in waiting %}
{% if not loop.first %}
UNION ALL
{% endif %}
{% with model = m.model %}
SELECT CAST({{ m.name }} AS TEXT) AS model WHERE (
{% include m.condition %}
) IS NOT TRUE
{% endwith %}
{% endfor %}
