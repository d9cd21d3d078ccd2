-- name: unseal
-- version: 1
--
-- `sqlrun unseal` (event `seal_id`, recorded just before): the dates become ordinary
-- again. Their open corrections are settled first, while the dates are still sealed
-- (settle.sql: the model's table takes what is true now, so nothing a reader sees changes
-- until the next apply replaces the date whole); then the models sealed there (`cover`)
-- are recorded as unsealed in seal_coverage, and the dates leave `seals`. Every version sent (<table>_sent, seal_events) and every
-- correction stays.
{% import "system/dialect.sql" as d %}
{% include "system/settle.sql" %}
{% for c in cover %}
INSERT INTO seal_coverage (seal_id, ds, model)
SELECT {{ seal_id }}, s.value, {{ c.model.name }}
FROM {{ d.dates(c.dates) }} AS s;
{% endfor %}
DELETE FROM seals WHERE ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
