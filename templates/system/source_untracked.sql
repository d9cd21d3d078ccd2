-- name: source_untracked
-- version: 2
--
-- A source whose triggers went missing (its table dropped and created again, a trigger
-- dropped or disabled) changed without being tracked: every date built so far is noted
-- as changed before tracking starts again.
{% import "system/dialect.sql" as d %}
{% import "system/common.sql" as common %}
INSERT INTO source_changes (source, ds, changed_at)
SELECT {{ source }}, p.ds, {{ d.now() }}
FROM run_partitions AS p
WHERE p.status IN {{ common.built() }}
GROUP BY p.ds
ON CONFLICT DO NOTHING;
