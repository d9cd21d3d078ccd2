-- name: upgrade_corrections
-- version: 1
--
-- A <table>_corrections made before seals had versions gets the columns of
-- corrections_table.sql v2. Its rows depart from the one version their dates had, saw
-- the seal events made before them, and are open; their cause was not recorded (NULL).
-- A model added after its dates were sealed was not covered by that seal: its rows
-- there (the "new" keys an older sqlrun wrote) depart from no version (seal_id NULL),
-- and <table>_current applies none of them (common.sql: only where the model is sealed).
ALTER TABLE {{ model.corrections_table|ident }} ADD COLUMN seal_id BIGINT;
ALTER TABLE {{ model.corrections_table|ident }} ADD COLUMN after_seal_id BIGINT;
ALTER TABLE {{ model.corrections_table|ident }} ADD COLUMN cause TEXT;
ALTER TABLE {{ model.corrections_table|ident }} ADD COLUMN settled_by BIGINT;
UPDATE {{ model.corrections_table|ident }}
SET seal_id = (SELECT min(c.seal_id) FROM seal_coverage AS c
                WHERE c.ds = {{ model.corrections_table|ident }}.{{ model.date_column|ident }}
                  AND c.model = {{ model.name }}),
    after_seal_id = (SELECT max(e.seal_id) FROM seal_events AS e
                      WHERE e.made_at <= {{ model.corrections_table|ident }}.corrected_at);
