-- Declared sources: see sql/sqlite/V14__source_declarations.sql.
CREATE TABLE source_declarations (
    source       text NOT NULL,
    version      bigint NOT NULL,
    checksum     text NOT NULL,
    body         text NOT NULL,
    how          text NOT NULL CHECK (how IN ('created', 'adopted', 'remade', 'migrated')),
    declared_at  timestamptz NOT NULL,
    PRIMARY KEY (source, version)
);

ALTER TABLE partition_sources ADD COLUMN noted_at timestamptz;
