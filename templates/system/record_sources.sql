-- name: record_sources
-- version: 2
--
-- The first statements of a date's transaction, before any model reads a source: for
-- each source the pipeline's models declare (and each lookup they reach), the date takes
-- the change notes of its date that it can see (source_changes, written by the source's
-- triggers) and records how many it took and the newest of them (partition_sources;
-- noted_at keeps "when did this source last change" once the notes are gone, for
-- source_freshness). A date with notes left afterwards is `changed`.
-- The notes it takes and the rows its models read are the same data: on SQLite the
-- date's transaction is the only writer; on PostgreSQL it is REPEATABLE READ, one
-- snapshot for all its statements, so a loader's insert that commits meanwhile is
-- neither read nor taken (its note stays: the date is changed), and neither waits.
-- (Version 1 recorded the count alone.)
{% for source in sources %}
INSERT INTO partition_sources (ds, source, changes, run_id, noted_at)
SELECT {{ ds }}, {{ source.table }}, count(*), {{ run_id }}, max(n.changed_at)
FROM source_changes AS n
WHERE n.source = {{ source.table }} AND n.ds = {{ ds }}
ON CONFLICT (ds, source) DO UPDATE SET changes = excluded.changes, run_id = excluded.run_id,
    noted_at = coalesce(excluded.noted_at, partition_sources.noted_at);
DELETE FROM source_changes WHERE source = {{ source.table }} AND ds = {{ ds }};
{% endfor %}
