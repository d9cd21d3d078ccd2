-- name: review_date
-- version: 1
--
-- A date's SQL as `sqlrun render --date D` shows it, for review: first, when a model
-- declares `-- ready:`, the query that asks whether its sources are ready (with any row
-- the date is not built, only recorded as skipped), then the date's transaction.
{% if waiting %}
{% include "system/ready.sql" %}
;
{% endif %}
{% include "system/date.sql" %}
