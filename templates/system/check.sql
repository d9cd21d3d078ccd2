-- name: check
-- version: 2
--
-- One check of one date: the rows its query returns are what is wrong (none: it
-- passes). Kept are the first `sample_rows` of them, each with how many there are in
-- all: what `sqlrun check` reads, and what a date reads of a check that found rows. The check reads `model` (its model) and `this`: the model's rows as they stand
-- now, its table, or on a sealed date its `_current` view (the corrected values).
-- It also reads `previous`: the rows this run replaced on the date (version 2; a CTE of
-- the statement, system/checks.sql's previous_version says what it holds).
-- The `sqlrun rows` line tells sqlrun to keep the statement's rows.
{% import "system/checks.sql" as gate %}
{% with model = check.model, this = (check.model.current_view if sealed else check.model.table)|ident, previous = "sqlrun_previous"|ident %}
-- sqlrun context: {{ ("checks/" ~ check.name)|ident }}
-- sqlrun rows: {{ check.name|ident }}
WITH {{ previous }} AS (
{{ gate.previous_version(model, sealed) }}
)
SELECT f.*, count(*) OVER () AS sqlrun_failing_rows
FROM (
{% include check.template %}
) AS f
LIMIT {{ sample_rows }};
{% endwith %}
