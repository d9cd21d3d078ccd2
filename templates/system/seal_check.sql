-- name: seal_check
-- version: 3
--
-- What `sqlrun seal`, `seal --reissue` and `unseal` find on each date of their
-- interval. They are all or nothing: a date no run built (blocked_missing) or that a
-- run holds now (blocked_by, the run) blocks a seal of every date; a reissue and an
-- unseal are blocked by a held date and by one not sealed. Runs that are gone were
-- reclaimed just before, in the same transaction, so their dates block nothing.
-- open_corrections: the date's live corrections (common.live: a reissue or an unseal
-- settles them). Then per model (computed_1, covered_1, computed_2, ...): computed on
-- the date (what a seal covers), and sealed there now. Version 3: provisional_1, ...:
-- the model's partition that starts on the date was built before its period ended
-- (`--allow-partial`), so it is never sealed.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
{% macro at() %}d.ds{% endmacro %}
WITH RECURSIVE dates(ds) AS (
    {{ d.date_series(start, end) }}
)
SELECT d.ds,
       NOT EXISTS (SELECT 1 FROM run_partitions AS p
                    WHERE p.ds = d.ds AND p.status IN {{ common.built() }}) AS blocked_missing,
       r.run_id AS blocked_by,
       (s.ds IS NOT NULL) AS sealed,
       {% for model in models %}
       (SELECT count(*) FROM {{ model.corrections_table|ident }} AS c
         WHERE c.{{ model.date_column|ident }} = d.ds AND {{ common.live(model, "c") }}) +
       {% endfor %}
       0 AS open_corrections
       {% for model in models %},
       {{ common.computed_on(model, at()) }} AS {{ ("computed_" ~ loop.index)|ident }},
       {{ common.covered(model, at()) }} AS {{ ("covered_" ~ loop.index)|ident }},
       EXISTS (SELECT 1 FROM partition_models AS pm
                WHERE pm.ds = d.ds AND pm.model = {{ "models/" ~ model.name }}
                  AND pm.provisional) AS {{ ("provisional_" ~ loop.index)|ident }}
       {% endfor %}

FROM dates AS d
LEFT JOIN reservations AS r ON r.ds = d.ds
LEFT JOIN seals AS s ON s.ds = d.ds
ORDER BY d.ds
