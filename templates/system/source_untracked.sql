-- name: source_untracked
-- version: 1
--
-- A source whose triggers went missing (its table dropped and created again, a trigger
-- dropped or disabled) changed without being tracked: every date built so far is noted
-- as changed before tracking starts again.
{% import "system/dialect.sql" as d %}
INSERT INTO source_changes (source, ds, changed_at)
SELECT {{ source }}, p.ds, {{ d.now() }}
FROM run_partitions AS p
WHERE p.status IN ('success', 'corrected', 'unchanged')
GROUP BY p.ds
ON CONFLICT DO NOTHING;
