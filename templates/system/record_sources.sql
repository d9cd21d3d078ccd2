-- name: record_sources
-- version: 1
--
-- The first statement of a date's transaction, before any model reads a source: for
-- each source the pipeline's models declare, the version of the rows this date reads is
-- recorded with the date (partition_sources; no version yet counts as 0). A date whose
-- source version moves on later is `changed`. The version and the models' reads see the
-- same data: on SQLite the date's transaction is the only writer; on PostgreSQL it is
-- REPEATABLE READ, one snapshot for all its statements, so a loader's insert that commits
-- meanwhile is neither read nor counted (it moves the version on: the date is changed).
{% for source in sources %}
INSERT INTO partition_sources (ds, source, version, run_id)
VALUES ({{ ds }}, {{ source.table }},
        coalesce((SELECT v.version FROM source_versions AS v
                   WHERE v.source = {{ source.table }} AND v.ds = {{ ds }}), 0),
        {{ run_id }})
ON CONFLICT (ds, source) DO UPDATE SET version = excluded.version, run_id = excluded.run_id;
{% endfor %}
