-- name: record_date
-- version: 9
--
-- The date's record, in the same transaction as its rows: which run computed it
-- and how it ended (a sealed date: corrected if any model wrote a correction in
-- this run, else unchanged), and which version of each model it computed built the
-- date's rows (partition_models: with --select, a date's models may come from different
-- runs). The date's reservation is released with the work, and the run's lease on the
-- dates it still holds is renewed when it runs low. Its start and end are the database's
-- clock: started_at was read from it just before the transaction (queries/is_sealed.sql),
-- and the end is the moment the work is done (not when the transaction began).
-- An undo (version 5) records, for a model it puts back, the version that built the rows
-- it put back (replaced_partitions kept it), so a date restored to an older version's rows
-- shows as stale.
-- Version 6: one partition_models row per partition the date built (`parts`: a model and
-- the first day of its period), and a sealed date is corrected when any of them wrote
-- a correction. Version 7: a part built before its period ended (`--allow-partial`) is
-- recorded provisional; a later build of it, after, makes it final. Version 8: when each
-- partition was built (`built_at`, the clock to the millisecond): a partition built before
-- a partition it reads stands `upstream` (date_states.sql). Version 9: a part put back
-- by an undo is told by its own flag (`part.restored`, as in replace.sql v5).
{% import "system/dialect.sql" as d %}
{% for part in parts %}
{% with model = part.model, ds = part.ds %}
{% if part.restored %}
INSERT INTO partition_models (ds, model, version, run_id, built_at)
SELECT {{ ds }}, {{ "models/" ~ model.name }},
       coalesce((SELECT rp.version FROM replaced_partitions AS rp
                  WHERE rp.model = {{ "models/" ~ model.name }} AND rp.ds = {{ ds }}
                    AND rp.replaced_by = {{ undo_of }}),
                {{ model.version }}),
       {{ run_id }}, {{ d.instant() }}
WHERE 1 = 1
ON CONFLICT (ds, model) DO UPDATE SET version = excluded.version, run_id = excluded.run_id,
    built_at = excluded.built_at;
{% else %}
INSERT INTO partition_models (ds, model, version, run_id, provisional, built_at)
VALUES ({{ ds }}, {{ "models/" ~ model.name }}, {{ model.version }}, {{ run_id }}, {% if part.provisional %}TRUE{% else %}FALSE{% endif %}, {{ d.instant() }})
ON CONFLICT (ds, model) DO UPDATE SET version = excluded.version, run_id = excluded.run_id,
    provisional = excluded.provisional, built_at = excluded.built_at;
{% endif %}
{% endwith %}
{% endfor %}
INSERT INTO run_partitions (run_id, ds, status, held_by, error, started_at, finished_at)
VALUES ({{ run_id }}, {{ ds }},
{% if sealed %}
        CASE WHEN {% for part in parts %}{% if not loop.first %}
               OR {% endif %}EXISTS (SELECT 1 FROM {{ part.model.corrections_table|ident }}
                          WHERE {{ part.model.date_column|ident }} = {{ part.period_start }} AND run_id = {{ run_id }}){% endfor %}

             THEN 'corrected' ELSE 'unchanged' END,
{% else %}
        'success',
{% endif %}
        NULL, NULL, {{ started_at }}, {{ d.clock() }});
DELETE FROM reservations WHERE ds = {{ ds }} AND run_id = {{ run_id }};
UPDATE reservations SET expires_at = {{ d.from_now(lease_seconds) }}
WHERE run_id = {{ run_id }} AND expires_at < {{ d.from_now(lease_seconds // 2) }};
