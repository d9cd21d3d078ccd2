-- name: date
-- version: 7
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
-- Version 7: the date's work is a list of partitions (`parts`), each a model and its
-- period, with its own `ds` (the period's first day), `period_start` and `period_end`
-- (the partition column's values), `window_start` and `window_end` (the span its
-- windows read; the period itself without one) and seal: a date builds its day's partitions, and the
-- coarser ones that end on it or that the cascade put there (src/run/cascade.rs). A
-- pipeline of days alone has one part per model, at the date.
-- A `sqlrun context` line says which model (or check) the statements after it belong
-- to, so that an error names it and its file.
{% include "system/record_sources.sql" %}
{% for part in parts %}
{% with model = part.model, ds = part.ds, next_ds = part.next_ds, prev_ds = part.prev_ds, ds_nodash = part.ds_nodash, period_start = part.period_start, period_end = part.period_end, window_start = part.window_start, window_end = part.window_end %}
-- sqlrun context: {{ model.name|ident }}
{% if part.sealed and model.name not in part.uncovered %}
{% include "system/correct.sql" %}
{% else %}
{% include "system/replace.sql" %}
{% endif %}
{% endwith %}
{% endfor %}
{% include "system/date_checks.sql" %}
-- sqlrun context: -
{% include "system/record_date.sql" %}
