-- name: correct
-- version: 9
--
-- A sealed date keeps its rows as sent. Recompute the model and compare it, key by
-- key, with the current values (the latest correction, else the sealed row). Each
-- difference becomes one correction row with the values it supersedes; a key that
-- vanished is a correction with removed = 1. Equal values write nothing, so the same
-- late data applied twice corrects once. A date's corrections are numbered in key
-- order (by the key expressions: a number printed here would be bound as a parameter,
-- and ORDER BY a parameter orders by nothing). Only a model the date's seal covers is
-- corrected (date.sql replaces one first computed on a sealed date instead).
-- Each correction says which seal version it departs from, the newest seal event it
-- saw, and its cause: the date's source rows changed since it was built (late_rows),
-- the model's version differs from the one that built it (new_version), both, or
-- neither (rerun; untracked for a model that declares no `-- sources:`, whose late
-- rows sqlrun cannot see). record_sources.sql counted the date's changes just before, and
-- partition_models still holds the version that built it (record_date.sql follows).
-- Version 7: the stored rows are found by the partition column's value, `period_start`
-- (a date, or an hour's first instant). Version 8: cause `upstream` for a model whose
-- inputs (`depends_on`, in the span it reads) this run rebuilt, on an earlier date or
-- earlier in this date's transaction (a cascaded date's parts), and whose own sources
-- and version did not change: a month corrected because a day was.
-- Undo (version 6): for a model in `restored` (`sqlrun undo RUN`), what the date is
-- recomputed to is the rows RUN replaced (system/undo_rows.sql), not its SELECT: a sealed
-- date gets corrections back to them, never an overwrite.
-- Version 9: that is the part's own flag (`part.restored`), as in replace.sql v5.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
WITH recomputed AS (
{% if part.restored %}
{% include "system/undo_rows.sql" %}
{% else %}
{% include model.template %}
{% endif %}
),
latest AS (
{{ common.latest_correction(model, d.same(), ds) }}
),
current_rows AS (
    SELECT {% for c in model.columns %}l.{{ c|ident }}, {% endfor %}1 AS present
    FROM latest AS l
    WHERE NOT l.removed
    UNION ALL
    SELECT {% for c in model.columns %}t.{{ c|ident }}, {% endfor %}1 AS present
    FROM {{ model.table|ident }} AS t
    WHERE t.{{ model.date_column|ident }} = {{ period_start }}
      AND NOT EXISTS (SELECT 1 FROM latest AS l
                      WHERE {{ common.same_key(model, "l", "t", d.same()) }})
),
cause AS (
    SELECT CASE WHEN late.n > 0 AND built.v {{ d.differs() }} {{ model.version }} THEN 'late_rows+new_version'
                WHEN late.n > 0 THEN 'late_rows'
                WHEN built.v {{ d.differs() }} {{ model.version }} THEN 'new_version'
{% if model.depends_on %}
{% set up = namespace(here=false) %}
{% if cascaded is defined %}{% for p in parts if p.model.name in model.depends_on %}{% set up.here = true %}{% endfor %}{% endif %}
                WHEN {% if up.here %}1 = 1 OR {% endif %}EXISTS (SELECT 1 FROM partition_models AS up
                              WHERE up.run_id = {{ run_id }}
                                AND up.ds >= {{ window_start }} AND up.ds < {{ window_end }}
                                AND up.model IN ({% for m in model.depends_on %}{% if not loop.first %}, {% endif %}{{ "models/" ~ m }}{% endfor %})) THEN 'upstream'
{% endif %}
                ELSE {% if model.sources %}'rerun'{% else %}'untracked'{% endif %} END AS cause
    FROM (SELECT {% if model.sources %}(SELECT coalesce(sum(ps.changes), 0) FROM partition_sources AS ps
                  WHERE ps.ds = {{ ds }} AND ps.run_id = {{ run_id }}
                    AND ps.source IN ({% for s in model.sources %}{% if not loop.first %}, {% endif %}{{ s.table }}{% endfor %})){% else %}0{% endif %} AS n) AS late,
         (SELECT (SELECT pm.version FROM partition_models AS pm
                   WHERE pm.ds = {{ ds }} AND pm.model = {{ "models/" ~ model.name }}) AS v) AS built
),
new_rows AS (
    SELECT {% for c in model.columns %}r.{{ c|ident }}, {% endfor %}1 AS present FROM recomputed AS r
)
INSERT INTO {{ model.corrections_table|ident }}
    ({{ model.key|idents }}, {{ model.values|idents }}, {% for v in model.values %}{{ ("previous_" ~ v)|ident }}, {% endfor %}removed, run_id, corrected_at, seal_id, after_seal_id, cause)
SELECT {% for k in model.key %}coalesce(n.{{ k|ident }}, c.{{ k|ident }}), {% endfor +%}
       {%+ for v in model.values %}n.{{ v|ident }}, {% endfor +%}
       {%+ for v in model.values %}c.{{ v|ident }}, {% endfor +%}
       n.present IS NULL, {{ run_id }}, {{ d.now() }},
       (SELECT sm.seal_id FROM sealed_models AS sm
         WHERE sm.ds = {{ ds }} AND sm.model = {{ model.name }}),
       (SELECT max(e.seal_id) FROM seal_events AS e),
       (SELECT cause FROM cause)
FROM new_rows AS n
FULL JOIN current_rows AS c
  ON {{ common.same_key(model, "n", "c", d.join_same()) }}
WHERE n.present IS NULL
   OR c.present IS NULL
{% for v in model.values %}
   OR n.{{ v|ident }} {{ d.differs() }} c.{{ v|ident }}
{% endfor %}
ORDER BY {% for k in model.key %}{% if not loop.first %}, {% endif %}coalesce(n.{{ k|ident }}, c.{{ k|ident }}){% endfor %};
