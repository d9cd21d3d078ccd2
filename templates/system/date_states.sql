-- name: date_states
-- version: 11
--
-- Each date of an interval and where it stands: the one answer that `status` (its
-- calendar, list and JSON), `apply` (what it selects) and `apply --dry-run` (its plan)
-- all read, so that they cannot disagree. Every lookup is by date on an index: the cost
-- follows the interval's length, not the history's. (`status` without an interval asks
-- known_span.sql for one first.)
--
-- Version 10: a week's, month's, quarter's or year's model has its rows on the period's
-- first day alone: on the other days it stands `current` (partition_states.sql judges its
-- partitions).
-- Version 11: upstream. A model's partition built before a partition it reads was built
-- again, by another run (common.sql's upstream: a `--no-downstream` run, a `--select` of
-- the days alone, a run stopped before its cascade ended) stands `upstream`; so does the
-- date, and a look back heals it (needs_work), as `--only upstream` selects it; per
-- model, `changed_N`: a source it reads changed (a date taken for upstream or changed
-- alone rebuilds those models, not the others).
-- `scope` is the models a run would compute (every model, or those --select names) with
-- their versions now; a retired model is in no scope, so it makes no date stale or
-- missing. Per model in scope, on each date (model_1, model_2, ...):
--   failed   the date's latest attempt failed in this model's statement
--   missing  no rows of it (never computed, or computed before the model existed)
--   upstream built, and a partition it reads was rebuilt after it by another run
--   current  built by the version in scope
--   stale    built by another version
-- Of the date:
--   missing  never computed, or a model in scope is missing
--   stale    computed, and a model in scope is stale or missing (what --only stale takes)
--   failed   its latest attempt failed;  changed  computed, and a source it reads
--   changed since (late data);  sealed, corrected (live corrections of a sealed date:
--   none once a reissue or an unseal settled them), seal_id and seal_version (its latest
--   seal event and how many versions went out), reissued (a reissue sent its latest
--   version), unsealed (not sealed now, and an unseal made it ordinary),
--   held (a run holds it now); checks: failed (its latest attempt failed an error
--   check) or warned (its latest build committed with warn checks finding rows), by
--   the checks of the scope as they are now (`checks`: `checks/NAME` and version): a
--   result of a check since removed or re-versioned stays in check_results, as history,
--   and marks nothing.
-- `state`, the date in one word (the calendar's cell, status --list, status --json), is
-- the first that applies of: held, failed, missing, changed, upstream, corrected, sealed,
-- stale (a
-- model built by another version; one with no rows is missing instead), computed. A seal
-- goes before stale: its numbers went out, and a newer version changes them only as a
-- correction (what --only stale still selects it for).
-- `reason`, why apply would compute it (its plan), is the first of: missing, failed,
-- changed, upstream, stale, current. `action`, what apply does to it when no other run holds it:
-- correct_if_changed (sealed), compute (missing), recompute.
-- What selects it: --only missing|failed|stale|changed|upstream the date-level facts of
-- those names; --lookback N the newest date (`end`) always, an older one only when it
-- needs work (never computed, failed, changed or upstream) and no run holds it. What needs work before
-- a look back's window, beyond_window.sql counts by the same rule (common.sql's macros).
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{#- A date's own column, for the macros that take an expression. #}
{% set at %}pd.ds{% endset %}
{#- Whether any model in scope stands in one of `states` on the date. #}
{#- Whether check result `k` is of a check as it is now: its name and version. #}
{% macro current_check(k) %}({% for c in checks %}{% if not loop.first %} OR {% endif %}({{ k|ident }}.check_name = {{ c.name }} AND {{ k|ident }}.version = {{ c.version }}){% else %}1 = 0{% endfor %}){% endmacro %}
{% macro any_model(states) %}({% for m in scope %}{% if not loop.first %} OR {% endif %}f.{{ ("model_" ~ loop.index)|ident }} IN ({% for s in states %}{% if not loop.first %}, {% endif %}{{ s }}{% endfor %}){% endfor %}){% endmacro %}
WITH RECURSIVE dates(ds) AS (
    {{ d.date_series(start, end) }}
),
per_date AS (
    SELECT d.ds,
           {{ common.built_run("d") }} AS built_run,
           {{ common.last_attempt("d") }} AS last_run,
           -- the last build of every model at once (no --select): what a date built
           -- before dates recorded their models (partition_models) was built by
           (SELECT p.run_id FROM run_partitions AS p
              JOIN runs AS fr ON fr.run_id = p.run_id
             WHERE p.ds = d.ds AND p.status IN {{ common.built() }}
               AND fr.selected_models IS NULL
             ORDER BY p.run_id DESC LIMIT 1) AS full_run
    FROM dates AS d
),
-- Materialized: judged reads each model's column several times, and PostgreSQL would
-- otherwise inline its subqueries at every read (a plan several times as costly to JIT).
facts AS MATERIALIZED (
    SELECT pd.ds,
           pd.built_run,
           br.kind AS built_kind,
           bp.finished_at AS built_at,
           (SELECT string_agg(b.name || '@' || b.version, ',' ORDER BY b.name)
              FROM (SELECT pm.model AS name, pm.version
                      FROM partition_models AS pm
                     WHERE pm.ds = pd.ds
                    UNION ALL
                    -- built before dates recorded their models: the versions of its last run
                    SELECT t.name, t.version
                      FROM run_templates AS t
                     WHERE t.run_id = pd.full_run AND t.kind = 'model'
                       AND NOT EXISTS (SELECT 1 FROM partition_models AS pm
                                        WHERE pm.ds = pd.ds AND pm.model = t.name)) AS b
           ) AS built_models,
           pd.last_run,
           lp.status AS last_status,
           lp.error AS last_error,
           s.sealed_at,
           s.sealed_by,
           {% for model in models %}
           (SELECT count(*) FROM {{ model.corrections_table|ident }} AS c
             WHERE c.{{ model.date_column|ident }} = pd.ds
               AND {{ common.live(model, "c") }}) +
           {% endfor %}
           0 AS corrections,
           r.run_id AS held_by,
           r.reserved_at AS held_since,
           r.expires_at AS held_until,
           hr.kind AS holder_kind,
           hr.requested_by AS holder_by,
           hr.status AS holder_status,
           {{ common.source_changed(sources, "pd") }} AS source_changed,
           lp.failed_model AS failed_model,
           -- what the checks said: its latest attempt failed an error check, or its
           -- latest build committed with warn checks finding rows
           CASE WHEN lp.status = 'failed'
                 AND EXISTS (SELECT 1 FROM check_results AS k
                              WHERE k.run_id = pd.last_run AND k.ds = pd.ds
                                AND k.severity = 'error'
                                AND {{ current_check("k") }}) THEN 'failed'
                WHEN EXISTS (SELECT 1 FROM check_results AS k
                              WHERE k.run_id = pd.built_run AND k.ds = pd.ds
                                AND k.severity = 'warn'
                                AND {{ current_check("k") }}) THEN 'warned'
           END AS checks,
           (pd.built_run IS NOT NULL) AS computed,
           (lp.status {{ d.same() }} 'failed') AS failed,
           {% for m in scope %}
           -- {{ m.name|ident }}: the version that built the date's rows
           CASE {% if m.grain in ["week", "month", "quarter", "year"] %}WHEN pd.ds <> {{ common.period_start(m.grain, at) }} THEN 'current'
                {% endif %}WHEN lp.status = 'failed' AND lp.failed_model = {{ m.name }} THEN 'failed'
                ELSE (SELECT CASE WHEN v.version IS NULL THEN 'missing'
                                  WHEN {{ common.upstream(m, at) }} THEN 'upstream'
                                  WHEN v.version = {{ m.version }} THEN 'current'
                                  ELSE 'stale' END
                        FROM (SELECT coalesce(
                                (SELECT pm.version FROM partition_models AS pm
                                  WHERE pm.ds = pd.ds AND pm.model = {{ m.name }}),
                                (SELECT t.version FROM run_templates AS t
                                  WHERE t.run_id = pd.full_run AND t.kind = 'model'
                                    AND t.name = {{ m.name }})) AS version) AS v)
           END AS {{ ("model_" ~ loop.index)|ident }},
           -- whether a source it reads (through its window) changed since: what
           -- --only changed and a look back rebuild of the date, alone
           {{ common.source_changed(m.noted, "pd") }} AS {{ ("changed_" ~ loop.index)|ident }},
           {% endfor %}
           (SELECT max(sm.seal_id) FROM sealed_models AS sm WHERE sm.ds = pd.ds) AS seal_id,
           (SELECT max(sm.version) FROM sealed_models AS sm WHERE sm.ds = pd.ds) AS seal_version,
           EXISTS (SELECT 1 FROM sealed_models AS sm
                    WHERE sm.ds = pd.ds AND sm.action = 'reissue') AS reissued,
           (s.ds IS NULL AND EXISTS (SELECT 1 FROM seal_coverage AS sc
                                       JOIN seal_events AS se ON se.seal_id = sc.seal_id
                                      WHERE sc.ds = pd.ds AND se.action = 'unseal')) AS unsealed,
           (s.ds IS NOT NULL) AS sealed
    FROM per_date AS pd
    LEFT JOIN run_partitions AS bp ON bp.run_id = pd.built_run AND bp.ds = pd.ds
    LEFT JOIN runs AS br ON br.run_id = pd.built_run
    LEFT JOIN run_partitions AS lp ON lp.run_id = pd.last_run AND lp.ds = pd.ds
    LEFT JOIN seals AS s ON s.ds = pd.ds
    LEFT JOIN reservations AS r ON r.ds = pd.ds
    LEFT JOIN runs AS hr ON hr.run_id = r.run_id
),
judged AS (
    SELECT f.*,
           (NOT f.computed OR {{ any_model(["missing"]) }}) AS missing,
           (f.computed AND {{ any_model(["stale", "missing"]) }}) AS stale,
           (f.computed AND {{ any_model(["stale"]) }}) AS behind,
           (f.computed AND f.source_changed) AS changed,
           (f.computed AND {{ any_model(["upstream"]) }}) AS upstream,
           (f.held_by IS NOT NULL) AS held,
           -- what a look back heals: never computed, failed, changed or upstream
           ({{ common.needs_work("f") }} OR (f.computed AND {{ any_model(["upstream"]) }})) AS needs_work
    FROM facts AS f
)
SELECT j.ds, j.built_run, j.built_kind, j.built_at, j.built_models, j.last_run,
       j.last_status, j.last_error, j.sealed_at, j.sealed_by, j.corrections, j.held_by,
       j.held_since, j.held_until, j.holder_kind, j.holder_by, j.holder_status,
       j.source_changed, j.failed_model, j.checks,
       j.computed, j.failed, j.missing, j.stale, j.changed, j.upstream, j.sealed,
       CASE WHEN j.held THEN 'held'
            WHEN j.failed THEN 'failed'
            WHEN j.missing THEN 'missing'
            WHEN j.changed THEN 'changed'
            WHEN j.upstream THEN 'upstream'
            WHEN j.corrections > 0 THEN 'corrected'
            WHEN j.sealed THEN 'sealed'
            WHEN j.behind THEN 'stale'
            ELSE 'computed' END AS state,
       CASE WHEN j.missing THEN 'missing'
            WHEN j.failed THEN 'failed'
            WHEN j.changed THEN 'changed'
            WHEN j.upstream THEN 'upstream'
            WHEN j.stale THEN 'stale'
            ELSE 'current' END AS reason,
       CASE WHEN j.sealed THEN 'correct_if_changed'
            WHEN j.missing THEN 'compute'
            ELSE 'recompute' END AS action,
       j.needs_work,
       -- why a look back takes it, in its note's words (never computed first)
       CASE WHEN NOT j.computed THEN 'missing'
            WHEN j.failed THEN 'failed'
            WHEN j.changed THEN 'changed'
            WHEN j.upstream THEN 'upstream'
            WHEN j.stale THEN 'stale'
            ELSE 'current' END AS lookback_reason,
       (j.ds = {{ end }}
        OR (NOT j.held AND j.needs_work)) AS lookback,
       j.seal_id, j.seal_version, j.unsealed, j.reissued
       {% for m in scope %}, j.{{ ("model_" ~ loop.index)|ident }}, j.{{ ("changed_" ~ loop.index)|ident }}{% endfor %}

FROM judged AS j
ORDER BY j.ds
