-- name: date
-- version: 6
--
-- One date's whole transaction (sqlrun runs it between BEGIN and COMMIT: BEGIN
-- IMMEDIATE on SQLite; on PostgreSQL REPEATABLE READ, after locking the date's
-- reservation row): the versions of the sources it reads, then each model in dependency
-- order, replaced whole, or, on a sealed date, compared and corrected (a model the
-- date's seal does not cover, first computed there after the seal, is replaced there:
-- `uncovered`, read by the run just before); then the checks
-- of those models (system/date_checks.sql: sqlrun reads how many rows each returns, and
-- an error check that returns any rolls the date back); then the date's record and the
-- release of its reservation.
-- A `sqlrun context` line says which model (or check) the statements after it belong
-- to, so that an error names it and its file.
{% include "system/record_sources.sql" %}
{% for model in models %}
-- sqlrun context: {{ model.name|ident }}
{% if sealed and model.name not in uncovered %}
{% include "system/correct.sql" %}
{% else %}
{% include "system/replace.sql" %}
{% endif %}
{% endfor %}
{% include "system/date_checks.sql" %}
-- sqlrun context: -
{% include "system/record_date.sql" %}
