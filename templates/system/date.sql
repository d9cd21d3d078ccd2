-- name: date
-- version: 2
--
-- One date's whole transaction (sqlrun runs it between BEGIN and COMMIT: BEGIN
-- IMMEDIATE on SQLite; on PostgreSQL after locking the date's reservation row):
-- each model in dependency order, replaced whole, or, on a sealed date, compared
-- and corrected; then the date's record and the release of its reservation.
{% for model in models %}
{% if sealed %}
{% include "system/correct.sql" %}
{% else %}
{% include "system/replace.sql" %}
{% endif %}
{% endfor %}
{% include "system/record_date.sql" %}
