-- name: unseal
-- version: 1
--
-- `sqlrun unseal` (event `seal_id`, recorded just before): the dates become ordinary
-- again. Their open corrections are settled first, while the dates are still sealed
-- (settle.sql: the model's table takes what is true now, so nothing a reader sees changes
-- until the next apply replaces the date whole); then every model sealed there (retired
-- ones too, from sealed_models) is recorded as unsealed in seal_coverage, and the dates
-- leave `seals`. A retired model's corrections are not folded (its template is gone):
-- they stop counting, as the date is no longer sealed for it. Every version sent (<table>_sent, seal_events) and every
-- correction stays.
{% import "system/dialect.sql" as d %}
{% include "system/settle.sql" %}
INSERT INTO seal_coverage (seal_id, ds, model)
SELECT {{ seal_id }}, m.ds, m.model
FROM sealed_models AS m
WHERE m.ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
DELETE FROM seals WHERE ds IN (SELECT s.value FROM {{ d.dates(dates) }} AS s);
