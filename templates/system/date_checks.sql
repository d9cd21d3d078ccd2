-- name: date_checks
-- version: 5
--
-- The checks of a date's models, after its models are written: how many rows each
-- returns, all in one statement (one round trip, whatever the number of checks). sqlrun
-- reads the counts (by position: check_1 is the first check, ...; a name could pass
-- PostgreSQL's 63 bytes); for a check that found rows it then reads the first of them
-- (system/check.sql), in the same transaction. Each check reads `model` (its model) and
-- `this`: the model's rows as they stand now, its table, or on a sealed date its
-- `_current` view (the corrected values), and `previous`: the rows this run replaced on
-- the date (version 2; one CTE per check, system/checks.sql's previous_version says what
-- it holds; a CTE no check reads costs nothing). Version 3: in a preview (`apply --diff`,
-- system/preview.sql, which replaces nothing) `previous` is what the run would replace,
-- the date's stored rows (checks.sql's stored_version). Version 4: only for a check whose
-- text names `previous` (Check::reads_previous): rendered, sent and planned for every check
-- of every date, the unread ones cost a run with history a tenth of its time. Version 5:
-- a check reads its model's partition of the date (`ds`, `period_start`, `period_end` of
-- the date's part of that model: a month built on its last day is checked as the month);
-- a check of a model the date does not build (a cascaded date builds some models only)
-- counts 0 rows, so that the counts keep their places.
{% if checks %}
{% import "system/checks.sql" as gate %}
-- sqlrun context: "checks"
-- sqlrun rows: "checks"
{% set readers = checks|selectattr("reads_previous")|list %}
{% if readers %}
{% set ns = namespace(first=true) %}
WITH
{% for c in checks %}
{% if c.reads_previous %}
{% if not ns.first %},{% endif %}{% set ns.first = false %}
{% set own = parts|selectattr("model.name", "equalto", c.model.name)|first %}
{{ ("sqlrun_previous_" ~ loop.index)|ident }} AS (
{% with ds = own.ds if own is defined else ds %}
{#- imported again here: a macro reads the `ds` of where it is imported #}
{% import "system/checks.sql" as gate %}
{% if previewed is defined %}
{{ gate.stored_version(c.model, sealed and c.model.name not in uncovered, schema) }}
{% else %}
{{ gate.previous_version(c.model, sealed) }}
{% endif %}
{% endwith %}
)
{% endif %}
{% endfor %}
{% endif %}
SELECT
{% for c in checks %}
{% set own = parts|selectattr("model.name", "equalto", c.model.name)|first %}
{% if own is defined %}
{% with model = c.model, ds = own.ds, period_start = own.period_start, period_end = own.period_end, this = (c.model.current_view if own.sealed else c.model.table)|ident, previous = ("sqlrun_previous_" ~ loop.index)|ident %}
       {% if not loop.first %}, {% endif %}(SELECT count(*) FROM (
{% include c.template %}
       ) AS f) AS {{ ("check_" ~ loop.index)|ident }}
{% endwith %}
{% else %}
       {% if not loop.first %}, {% endif %}0 AS {{ ("check_" ~ loop.index)|ident }}
{% endif %}
{% endfor %}
;
{% endif %}
