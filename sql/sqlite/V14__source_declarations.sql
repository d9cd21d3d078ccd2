-- Declared sources (sources/NAME.sql): the version of each declaration the table was
-- created, adopted or migrated to, with its text. One row per source and version, added
-- when a sync brings the table there (never updated): the latest is what the table is
-- now. A declaration whose text changed under a version recorded here is refused; a
-- newer version runs its `-- migrate:` SQL first (src/pipeline/declare.rs;
-- queries/record_source_declaration.sql writes it).
CREATE TABLE source_declarations (
    source       TEXT NOT NULL,
    version      INTEGER NOT NULL,
    checksum     TEXT NOT NULL,
    body         TEXT NOT NULL,
    how          TEXT NOT NULL CHECK (how IN ('created', 'adopted', 'remade', 'migrated')),
    declared_at  TEXT NOT NULL,
    PRIMARY KEY (source, version)
);

-- Freshness: the newest change note a date took from each source (the note itself is
-- deleted when taken), so "when did this source last change" outlives the notes.
ALTER TABLE partition_sources ADD COLUMN noted_at TEXT;
