-- name: source_freshness
-- version: 1
--
-- When each source last changed, and whether that is recent enough: the view
-- source_freshness, one row per source the pipeline declares (sources/NAME.sql) or
-- tracks (`-- sources:`). last_change_at is the newest of the source's `-- loaded_at:`
-- column, when it declares one, else of its change notes: those not taken yet
-- (source_changes) and the newest each date took (partition_sources.noted_at). A source
-- that declares `-- fresh_within:` is fresh while its last change is at most that long ago
-- (dbt's source freshness, read the same way); fresh is NULL without it, and false for a
-- source that never changed. On SQLite a loaded_at value is read by datetime(), so
-- `2026-12-03T10:00:00+09:00` counts as the UTC time it is. A lookup's change notes exist
-- only for keys that fact rows hold: declare its `-- loaded_at:` (its updated_at, say) to
-- measure it by its own rows. On SQLite a date's note keeps the time of the first change
-- since the date was built (the notes have one row per date there). `sqlrun status` shows it; a model's `-- ready:` may read it,
-- e.g. `(SELECT last_change_at FROM source_freshness WHERE source = 'orders') >= {% raw %}{{ next_ds }}{% endraw %}`
-- (orders loaded past the end of the date).
{% import "system/dialect.sql" as d %}
{#- A time as every row of the view has it: timestamptz on PostgreSQL (a loaded_at column
    may be a date or a timestamp), the text as stored on SQLite. #}
CREATE VIEW source_freshness AS
{% for s in entries %}
{% if not loop.first %}
UNION ALL
{% endif %}
SELECT {{ s.name }} AS source,
       {{ "loaded_at column" if s.loaded_at else "change notes" }} AS measured_by,
       f.last_change_at,
       {{ s.fresh_within_seconds }} AS fresh_within_seconds,
{% if s.fresh_within_seconds %}
       CASE WHEN f.last_change_at IS NULL THEN false
{% if dialect == "postgres" %}
            ELSE f.last_change_at >= {{ d.ago(s.fresh_within_seconds) }} END AS fresh
{% else %}
            ELSE datetime(f.last_change_at) >= {{ d.ago(s.fresh_within_seconds) }} END AS fresh
{% endif %}
{% else %}
       NULL AS fresh
{% endif %}
{% if dialect == "postgres" %}
FROM (SELECT CAST((
{% else %}
FROM (SELECT (
{% endif %}
{% if s.loaded_at %}
        SELECT max({{ s.loaded_at|ident }}) FROM {{ s.name|ident }}
{% else %}
        SELECT max(c.at) FROM (SELECT max(changed_at) AS at FROM source_changes WHERE source = {{ s.name }}
                               UNION ALL
                               SELECT max(noted_at) FROM partition_sources WHERE source = {{ s.name }}) AS c
{% endif %}
{% if dialect == "postgres" %}
        ) AS timestamptz) AS last_change_at) AS f
{% else %}
        ) AS last_change_at) AS f
{% endif %}
{% endfor %}
