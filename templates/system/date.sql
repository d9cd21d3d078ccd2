-- name: date
-- version: 3
--
-- One date's whole transaction (sqlrun runs it between BEGIN and COMMIT: BEGIN
-- IMMEDIATE on SQLite; on PostgreSQL REPEATABLE READ, after locking the date's
-- reservation row): the versions of the sources it reads, then each model in dependency
-- order, replaced whole, or, on a sealed date, compared and corrected; then the date's
-- record and the release of its reservation.
{% include "system/record_sources.sql" %}
{% for model in models %}
{% if sealed %}
{% include "system/correct.sql" %}
{% else %}
{% include "system/replace.sql" %}
{% endif %}
{% endfor %}
{% include "system/record_date.sql" %}
