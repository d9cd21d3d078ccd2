-- name: upgrade_sent
-- version: 1
--
-- A <table>_sent made before seals had versions (sent_table.sql v1: one row per key)
-- gets its seal_id: the seal that sent it (migration V11 recorded one event per seal
-- made before), and its unique index becomes one per key and version.
ALTER TABLE {{ model.sent_table|ident }} ADD COLUMN seal_id BIGINT;
UPDATE {{ model.sent_table|ident }}
SET seal_id = coalesce(
        (SELECT sm.seal_id FROM sealed_models AS sm
          WHERE sm.ds = {{ model.sent_table|ident }}.{{ model.date_column|ident }}
            AND sm.model = {{ model.name }}),
        (SELECT min(c.seal_id) FROM seal_coverage AS c
          WHERE c.ds = {{ model.sent_table|ident }}.{{ model.date_column|ident }}));
DROP INDEX {{ (model.sent_table ~ "_by_key")|ident }};
CREATE UNIQUE INDEX {{ (model.sent_table ~ "_by_version")|ident }}
    ON {{ model.sent_table|ident }} ({{ model.key|idents }}, seal_id);
