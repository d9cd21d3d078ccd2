-- name: source_untracked
-- version: 1
--
-- A source whose triggers went missing (its table dropped and created again, a trigger
-- dropped or disabled) changed without being tracked: every date built from it, or
-- whose rows it ever counted, is marked changed before tracking starts again.
{% import "system/dialect.sql" as d %}
UPDATE source_versions SET version = version + 1, changed_at = {{ d.now() }}
WHERE source = {{ source }};
INSERT INTO source_versions (source, ds, version, changed_at)
SELECT {{ source }}, p.ds, 1, {{ d.now() }}
FROM run_partitions AS p
WHERE p.status IN ('success', 'corrected', 'unchanged')
GROUP BY p.ds
ON CONFLICT (source, ds) DO NOTHING;
