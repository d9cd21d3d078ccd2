-- name: partition_states
-- version: 2
--
-- Where each partition of one model of a grain coarser than the day stands (`status`
-- shows them beside the dates, whose states judge days): `periods` is the first days of
-- the model's periods in the span, as JSON. A partition is recorded in partition_models
-- by its period's first day:
--   missing      no partition built
--   provisional  built before its period ended (`apply --allow-partial`)
--   upstream     built before a partition it reads was rebuilt by another run (version 2;
--                common.sql's upstream, as date_states.sql judges it on the first day)
--   stale        built by another version of the model
--   computed     built by the version now, after its period ended
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% set at %}s.value{% endset %}
SELECT s.value AS ds,
       CASE WHEN pm.version IS NULL THEN 'missing'
            WHEN pm.provisional THEN 'provisional'
            WHEN {{ common.upstream(scoped, at) }} THEN 'upstream'
            WHEN pm.version <> {{ model.version }} THEN 'stale'
            ELSE 'computed' END AS state
FROM {{ d.dates(periods) }} AS s
LEFT JOIN partition_models AS pm
       ON pm.ds = s.value AND pm.model = {{ "models/" ~ model.name }}
ORDER BY s.value
