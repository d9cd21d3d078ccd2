-- name: common
-- version: 5
--
-- What several system templates say alike, said once here so that it cannot drift
-- apart. Imported as `c`, beside the dialect's `d`.
-- Version 4: source_changed also reads, for a source a model reads through a window
-- (`-- sources: orders(...) window -6..0`), the notes of the days that window reaches:
-- a late order marks every rolling date that reads its day; period_start, the first day
-- of the week, month, quarter or year a date falls in.
-- Version 5: upstream, whether a partition was built before a partition it reads was
-- rebuilt by another run (the `upstream` state), with the spans each read reaches.
{% import "system/dialect.sql" as d %}
{#- The statuses of a date whose rows a run built (run_partitions.status): a date that
    was replaced (success) or, sealed, compared (corrected, unchanged). #}
{% macro built() %}('success', 'corrected', 'unchanged'){% endmacro %}
{#- Row `a` and row `b` of a model have the same key: `a.k1 op b.k1 AND ...`. `op` is
    the dialect's null-safe equality, d.same(), or in a FULL JOIN d.join_same(). #}
{% macro same_key(model, a, b, op) %}{% for k in model.key %}{% if not loop.first %} AND {% endif %}{{ a|ident }}.{{ k|ident }} {{ op }} {{ b|ident }}.{{ k|ident }}{% endfor %}{% endmacro %}
{#- Whether correction `c` of the model is live: open (no reissue or unseal settled it)
    and measured against the version of its date sealed now: the date is sealed, and no
    event covered the date and model after the version it departs from (sealed_models,
    said on the tables: a date's statements plan it several times). A correction means
    something only against what went out: one of a date sealed again since (a reissue, an
    unseal, a later seal), or of a model its date's seal does not cover, counts nowhere. #}
{% macro live(model, c) %}{{ c|ident }}.settled_by IS NULL
      AND EXISTS (SELECT 1 FROM seals AS ls WHERE ls.ds = {{ c|ident }}.{{ model.date_column|ident }})
      AND NOT EXISTS (SELECT 1 FROM seal_coverage AS lv
                       WHERE lv.ds = {{ c|ident }}.{{ model.date_column|ident }} AND lv.model = {{ model.name }}
                         AND lv.seal_id > {{ c|ident }}.seal_id)
      AND {{ c|ident }}.seal_id IS NOT NULL{% endmacro %}
{#- The body of a CTE `latest`: each key's latest live correction of the model (the
    highest correction_id wins; a reissue or an unseal settles every correction of its
    dates, so a settled latest one means none is live), of one date when `ds` is given,
    else of every date. #}
{% macro latest_correction(model, op, ds=none) %}
    SELECT c.*
    FROM {{ model.corrections_table|ident }} AS c
    WHERE {% if ds is not none %}c.{{ model.date_column|ident }} = {{ ds }}
      AND {% endif %}{{ live(model, "c") }}
      AND c.correction_id = (
            SELECT max(c2.correction_id)
            FROM {{ model.corrections_table|ident }} AS c2
            WHERE {{ same_key(model, "c2", "c", op) }})
{%- endmacro %}
{#- Whether the model is sealed on date `ds` now: a seal or reissue covered it there
    (a model first computed on a sealed date afterwards is not, until one does). #}
{% macro covered(model, ds) %}EXISTS (SELECT 1 FROM sealed_models AS sm
                WHERE sm.ds = {{ ds }} AND sm.model = {{ model.name }}){% endmacro %}
{#- Whether the model was computed on date `ds`, which a seal covers: a version of it
    built the date's rows (partition_models), or, for a date built before dates recorded
    their models, a run of every model (no --select) that used it built the date. #}
{% macro computed_on(model, ds) %}(EXISTS (SELECT 1 FROM partition_models AS pm
                 WHERE pm.ds = {{ ds }} AND pm.model = {{ "models/" ~ model.name }})
     OR EXISTS (SELECT 1 FROM run_partitions AS p
                  JOIN runs AS r ON r.run_id = p.run_id AND r.selected_models IS NULL
                  JOIN run_templates AS t ON t.run_id = p.run_id AND t.kind = 'model'
                   AND t.name = {{ "models/" ~ model.name }}
                 WHERE p.ds = {{ ds }} AND p.status IN {{ built() }})){% endmacro %}
{#- A date's latest attempt (its run, skips aside) and the latest run that built its rows,
    for the date in column `ds` of row `a`: the facts the date rule starts from. #}
{% macro last_attempt(a) %}(SELECT p.run_id FROM run_partitions AS p
             WHERE p.ds = {{ a|ident }}.ds AND p.status <> 'skipped'
             ORDER BY p.run_id DESC LIMIT 1){% endmacro %}
{% macro built_run(a) %}(SELECT p.run_id FROM run_partitions AS p
             WHERE p.ds = {{ a|ident }}.ds AND p.status IN {{ built() }}
             ORDER BY p.run_id DESC LIMIT 1){% endmacro %}
{#- Whether a source the pipeline reads has changed on row `a`'s date since it was built
    (its change notes not taken yet): late data. #}
{% macro source_changed(sources, a) %}{% set at %}{{ a|ident }}.ds{% endset %}{% if sources %}EXISTS (SELECT 1
                     FROM source_changes AS n
                    WHERE n.source IN ({% for s in sources %}{% if not loop.first %}, {% endif %}{{ s.table }}{% endfor %})
                      AND n.ds = {{ a|ident }}.ds){% for s in sources if s.window %}
               OR EXISTS (SELECT 1 FROM source_changes AS n
                           WHERE n.source = {{ s.table }}
                             AND n.ds BETWEEN {{ d.days_after(at, s.window[0]) }} AND {{ d.days_after(at, s.window[1]) }}){% endfor %}{% else %}(1 = 0){% endif %}{% endmacro %}
{#- What a look back heals on row `a`'s date (its columns computed, failed and
    source_changed): never computed, failed, or changed. #}
{% macro needs_work(a) %}(NOT {{ a|ident }}.computed OR {{ a|ident }}.failed
            OR ({{ a|ident }}.computed AND {{ a|ident }}.source_changed)){% endmacro %}
{#- The first day of the `grain` period (week, month, quarter, year) date `at` falls in. #}
{% macro period_start(grain, at) %}{% if grain == "week" %}{{ d.iso_week_start(at) }}{% elif grain == "month" %}{{ d.month_start(at) }}{% elif grain == "quarter" %}{{ d.quarter_start(at) }}{% else %}{{ d.year_start(at) }}{% endif %}{% endmacro %}

{#- A date `n` periods of `grain` after `at` (a period's first day; an hour's model
    records its partitions by day, so an hour counts as a day here). #}
{% macro shift(grain, at, n) %}{% if grain in ["day", "hour"] %}{{ d.days_after(at, n) }}{% elif grain == "week" %}{{ d.days_after(at, n * 7) }}{% elif grain == "month" %}{{ d.months_after(at, n) }}{% elif grain == "quarter" %}{{ d.months_after(at, n * 3) }}{% else %}{{ d.months_after(at, n * 12) }}{% endif %}{% endmacro %}
{#- The first day of the `grain` period that date `at` falls in (a day: itself). #}
{% macro start_of(grain, at) %}{% if grain in ["day", "hour"] %}{{ at }}{% else %}{{ period_start(grain, at) }}{% endif %}{% endmacro %}
{#- What the partition of grain `own` that starts on `at` reads through read `r` (`from`,
    its `grain`, `window` [a, b]): the read model's periods from a before the first one it
    overlaps to b after the last one, as the half-open span of their first days. The rule
    of src/pipeline/cascade.rs, which plans the cascade; tests/cli/grains.rs holds the
    two to the same partitions. #}
{% macro read_from(r, at) %}{{ shift(r.grain, start_of(r.grain, at), r.window[0]) }}{% endmacro %}
{% macro read_to(own, r, at) %}{% set last_day %}{{ d.days_before(shift(own, at, 1), 1) }}{% endset %}{{ shift(r.grain, start_of(r.grain, last_day), r.window[1] + 1) }}{% endmacro %}
{#- Whether model `m`'s partition that starts on date `at` (`m`: its `name`, `grain` and
    the models it `reads`) was built before a partition it reads was built again by
    another run: what a `--no-downstream` run, a `--select` of the days alone, or a run
    stopped before its cascade ended leaves behind. Judged by partition_models' built_at
    (record_date.sql, version 8); a partition recorded before that column is not judged. #}
{% macro upstream(m, at) %}{% if m.reads %}EXISTS (SELECT 1 FROM partition_models AS mine
                WHERE mine.ds = {{ at }} AND mine.model = {{ m.name }}
                  AND mine.built_at IS NOT NULL
                  AND ({% for r in m.reads %}{% if not loop.first %} OR {% endif %}EXISTS (SELECT 1 FROM partition_models AS i
                              WHERE i.model = {{ r.from }}
                                AND i.ds >= {{ read_from(r, at) }}
                                AND i.ds < {{ read_to(m.grain, r, at) }}
                                AND i.run_id <> mine.run_id
                                AND i.built_at > mine.built_at){% endfor %})){% else %}(1 = 0){% endif %}{% endmacro %}
